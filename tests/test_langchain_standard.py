"""LangChain's standard retriever test suite (``langchain-tests``), when it is installed.

``pip install langchain-tests`` to run it; the contract itself is also tested directly in
test_langchain_retrievers.py.
"""

from __future__ import annotations

import asyncio
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langchain_tests")


def _load_retriever_suite() -> Any:
    """Load langchain_tests/integration_tests/retrievers.py alone: the package ``__init__`` imports every suite,
    whose pytest marks (benchmark, vcr …) this project's ``--strict-markers`` does not know."""
    import importlib.util

    import langchain_tests

    path = Path(langchain_tests.__file__).parent / "integration_tests" / "retrievers.py"
    spec = importlib.util.spec_from_file_location("_langchain_retriever_suite", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


retrievers = _load_retriever_suite()

from tests.test_langchain_retrievers import build_search  # noqa: E402


@lru_cache(maxsize=1)
def _search() -> Any:
    return build_search(Path(tempfile.mkdtemp(prefix="lc-standard-")))


class _SyncAinvoke:
    """Run the suite's async test without an asyncio pytest plugin."""

    def test_ainvoke_returns_documents(self, retriever: Any) -> None:  # type: ignore[override]
        from langchain_core.documents import Document

        result = asyncio.run(retriever.ainvoke(self.retriever_query_example))  # type: ignore[attr-defined]
        assert isinstance(result, list)
        assert all(isinstance(doc, Document) for doc in result)


class TestLawCorpusRetrieverStandard(_SyncAinvoke, retrievers.RetrieversIntegrationTests):  # type: ignore[misc]
    @property
    def retriever_constructor(self) -> type:
        from compliance.integrations.langchain import LawCorpusRetriever

        return LawCorpusRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"search": _search()}

    @property
    def retriever_query_example(self) -> str:
        return "consent to cookies, marketing e-mail, breach notification and payment authentication"


class TestControlsRetrieverStandard(_SyncAinvoke, retrievers.RetrieversIntegrationTests):  # type: ignore[misc]
    @property
    def retriever_constructor(self) -> type:
        from compliance.integrations.langchain import ControlsRetriever

        return ControlsRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"search": _search()}

    @property
    def retriever_query_example(self) -> str:
        return "cookies, marketing e-mails and documents on desks"
