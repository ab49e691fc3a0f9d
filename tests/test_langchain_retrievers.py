"""The LangChain retrievers' contract: ``k`` as a field and per call, Documents with ids/scores/keys, async."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core")

FIXTURES = Path(__file__).parent / "fixtures" / "alerts"


def build_search(root: Path) -> Any:
    """A SQLite store with the fixture controls and two mini laws, searched with BM25 alone."""
    from compliance.connectors import parse_path
    from compliance.rules import load_law_file
    from compliance.search import LawSearch
    from compliance.store import Store

    store = Store(f"sqlite:///{root / 'lc.db'}")
    store.ensure_schema()
    store.save_document(parse_path(FIXTURES / "controls.txt"))
    store.save_law(load_law_file(FIXTURES / "mini_cookie_law.json"))
    store.save_law(load_law_file(FIXTURES / "mini_payments_law.json"))
    return LawSearch(store, dense=False, index_dir=root / "idx")


@pytest.fixture(scope="module")
def search(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return build_search(tmp_path_factory.mktemp("lc"))


def test_law_corpus_retriever(search: Any) -> None:
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    from compliance.integrations.langchain import LawCorpusRetriever

    retriever = LawCorpusRetriever(search=search, k=3)
    assert isinstance(retriever, BaseRetriever)
    docs = retriever.invoke("analytics cookies stored on the visitor's device after consent; payment")
    assert len(docs) == 3 and all(isinstance(d, Document) for d in docs)
    top = docs[0]
    assert top.id == "minicookie/art:1"
    assert top.metadata["law"] == "minicookie" and top.metadata["key"] == "art:1"
    assert top.metadata["rank"] == 1 and top.metadata["provision_id"] is not None
    assert top.metadata["score"] >= docs[1].metadata["score"]
    assert "terminal equipment" in top.page_content
    assert len(retriever.invoke("cookies", k=1)) == 1  # per-call k
    assert retriever.k == 3  # the field is unchanged by a call
    only = retriever.invoke("consent to cookies and to payment authentication", law="minipay")
    assert {d.metadata["law"] for d in only} == {"minipay"}
    batch = retriever.batch(["cookies", "payment authentication"])
    assert batch[1][0].metadata["law"] == "minipay"


def test_controls_retriever(search: Any) -> None:
    from compliance.integrations.langchain import ControlsRetriever

    retriever = ControlsRetriever(search=search, k=2)
    docs = retriever.invoke("marketing e-mails need an opt-in and an unsubscribe link; cookies")
    assert len(docs) == 2
    top = docs[0]
    assert "unsubscribe" in top.page_content
    assert top.metadata["paragraph_id"] == int(top.id)  # type: ignore[arg-type]
    assert top.metadata["source"].endswith("controls.txt")
    assert top.metadata["shared_terms"]
    assert "bm25" in top.metadata["scores"]
    assert len(retriever.invoke("cookies", k=1)) == 1
    docs_async = asyncio.run(retriever.ainvoke("cookies on devices", k=1))
    assert len(docs_async) == 1 and "cookies" in docs_async[0].page_content


def test_k_validation(search: Any) -> None:
    from pydantic import ValidationError

    from compliance.integrations.langchain import ControlsRetriever

    with pytest.raises(ValidationError):
        ControlsRetriever(search=search, k=0)


def test_from_store(tmp_path: Path) -> None:
    from compliance.integrations.langchain import LawCorpusRetriever
    from compliance.retrieval.indexes import index_configs

    build_search(tmp_path)
    retriever = LawCorpusRetriever.from_store(
        f"sqlite:///{tmp_path / 'lc.db'}",
        config=index_configs(dense=False),
        index_dir=str(tmp_path / "idx2"),
        k=2,
    )
    docs = retriever.invoke("payment transaction credited business day")
    assert docs[0].metadata["law"] == "minipay"
    # the product's configuration by default, BM25 alone with dense=False: the same index API as search/alerts
    from compliance.retrieval import index_configs

    plain = LawCorpusRetriever.from_store(
        f"sqlite:///{tmp_path / 'lc.db'}", index_dir=str(tmp_path / "idx3"), dense=False
    )
    assert plain.search.configs == index_configs(dense=False)
    assert plain.invoke("payment transaction credited business day", k=1)[0].metadata["law"] == "minipay"
