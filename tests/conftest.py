"""Shared fixtures. Tests never touch the network (HF_HUB_OFFLINE=1) or the user's data home."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
EXAMPLES = REPO_ROOT / "examples"


def shared_data_dir() -> Path | None:
    """../shared/data (or COMPLIANCE_SHARED_DATA): the official texts and development sets, never committed."""
    env = os.environ.get("COMPLIANCE_SHARED_DATA")
    candidate = Path(env) if env else REPO_ROOT.parent / "shared" / "data"
    return candidate if candidate.is_dir() else None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = shared_data_dir()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("../shared/data is missing in CI")
        pytest.skip("../shared/data not available")
    return path


@pytest.fixture(scope="session")
def gdpr_xml(shared_data: Path) -> Path:
    return shared_data / "laws" / "gdpr" / "gdpr-consolidated-with-corrected-preamble-en.xml"


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Every test gets its own COMPLIANCE_HOME so nothing leaks into ~/.local/share, and the models shipped with
    the package are off (tests see an empty model directory as empty; the ``shipped_models`` fixture turns them
    on), and so are the command line's progress lines."""
    from compliance.settings import reset_settings

    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("COMPLIANCE_HOME", str(home))
    monkeypatch.setenv("COMPLIANCE_SHIPPED_MODELS", "false")
    monkeypatch.setenv("COMPLIANCE_PROGRESS", "off")  # tests read stderr line by line
    monkeypatch.delenv("COMPLIANCE_DATABASE_URL", raising=False)
    reset_settings()
    yield
    reset_settings()


@pytest.fixture
def shipped_models(monkeypatch: pytest.MonkeyPatch) -> None:
    """The models shipped inside the package are used when the (empty, per-test) home has none."""
    from compliance.settings import reset_settings

    monkeypatch.setenv("COMPLIANCE_SHIPPED_MODELS", "true")
    reset_settings()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """An empty ``compliance.store.Store`` migrated to head, on SQLite and on PostgreSQL (a fresh schema per
    test; skipped when the server is unreachable, a failure when the CI variable is set)."""
    from compliance.store.testing import migrated_store, postgres_unavailable_reason

    if request.param == "postgresql" and (reason := postgres_unavailable_reason()):
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    with migrated_store(request.param, tmp_path) as s:
        yield s
