"""Query sets for evaluating GDPR article rankers, with no leakage into training.

* ``qa``: held-out article sentences (never in the training set, see :mod:`compliance.models.data`);
* ``qr``: held-out recitals, gold = the articles the recital map associates with them;
* ``gdprhub``: the GDPRhub development texts (case facts with explicit references masked), split
  deterministically by id into a part that may be used as extra supervision (``train``) and a held-out part
  (``test``) that is always the one evaluated;
* ``controls``: the hand-written control set shipped with the package (``evaluation/data/controls.jsonl``,
  read through :mod:`importlib.resources`);
* the user's own labelled JSONL files (``{"id", "text", "articles": [...]}`` per line):
  :func:`labelled_query_set`, named after the file's stem (``compliance evaluate --queries FILE``).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from compliance.errors import ConfigurationError
from compliance.evaluation.evaluator import QuerySet
from compliance.models.data import Example

__all__ = [
    "BUNDLED_SETS",
    "GDPRHUB_FILE",
    "abbreviation_controls_query_set",
    "bundled_data",
    "controls_query_set",
    "examples_query_set",
    "false_friends",
    "gdprhub_article_counts",
    "gdprhub_lead_query_set",
    "gdprhub_path",
    "gdprhub_split",
    "labelled_query_set",
    "list_controls_query_set",
    "load_gdprhub",
    "security_controls_query_set",
    "word_sense_controls_query_set",
    "write_gdprhub_train",
]

GDPRHUB_FILE = Path("eval") / "gdprhub_dev.jsonl"
#: share of GDPRhub texts (by id hash) that may be used for training; the rest is held out for evaluation.
GDPRHUB_TRAIN_SHARE = 0.5


def examples_query_set(name: str, examples: Iterable[Example], description: str = "") -> QuerySet:
    """A query set from held-out :class:`~compliance.models.data.Example` objects."""
    exs = list(examples)
    return QuerySet(name, {e.id: e.text for e in exs}, {e.id: list(e.labels) for e in exs}, description)


def bundled_data(name: str) -> Traversable:
    """A file of the evaluation data shipped with the package (``compliance/evaluation/data/<name>``)."""
    return resources.files("compliance.evaluation") / "data" / name


def _read_jsonl(path: Path | Traversable) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError as e:
                    raise ConfigurationError(f"{path}:{n}: not valid JSON: {e}") from e
    return rows


def gdprhub_path(shared_data: Path | None = None) -> Path | None:
    """``<shared data>/eval/gdprhub_dev.jsonl`` if present (settings ``COMPLIANCE_SHARED_DATA``)."""
    if shared_data is None:
        from compliance.settings import get_settings

        shared_data = get_settings().resolved_shared_data()
    if shared_data is None:
        return None
    path = shared_data / GDPRHUB_FILE
    return path if path.is_file() else None


def load_gdprhub(path: Path, valid_articles: Sequence[int] = range(1, 100)) -> list[dict[str, Any]]:
    """GDPRhub rows with their ``gdpr_articles`` restricted to valid article numbers (rows left empty dropped)."""
    valid = set(valid_articles)
    out = []
    for row in _read_jsonl(path):
        arts = sorted({int(a) for a in row.get("gdpr_articles", []) if int(a) in valid})
        if arts and str(row.get("text", "")).strip():
            out.append({**row, "gdpr_articles": arts})
    return out


def gdprhub_split(row_id: str, train_share: float = GDPRHUB_TRAIN_SHARE) -> str:
    """``train`` or ``test`` for a GDPRhub id (sha1 of the id; stable across runs and machines)."""
    h = int.from_bytes(hashlib.sha1(f"gdprhub:{row_id}".encode()).digest()[:8], "big") / 2**64
    return "train" if h < train_share else "test"


def gdprhub_query_set(rows: Sequence[dict[str, Any]], part: str = "test") -> QuerySet:
    """The GDPRhub rows of one split part as a query set."""
    sel = [r for r in rows if gdprhub_split(str(r["id"])) == part]
    return QuerySet(
        f"gdprhub-{part}",
        {str(r["id"]): str(r["text"]) for r in sel},
        {str(r["id"]): list(r["gdpr_articles"]) for r in sel},
        "GDPRhub case facts (references masked), held-out half by id hash",
    )


def gdprhub_lead_query_set(rows: Sequence[dict[str, Any]], part: str = "test") -> QuerySet:
    """The same cases' ``lead`` summaries (one to three sentences on what the authority or court decided, often
    naming a fine) as a query set, for the rows that have one."""
    sel = [r for r in rows if str(r.get("lead") or "").strip() and gdprhub_split(str(r["id"])) == part]
    return QuerySet(
        f"gdprhub-lead-{part}",
        {str(r["id"]): str(r["lead"]) for r in sel},
        {str(r["id"]): list(r["gdpr_articles"]) for r in sel},
        "GDPRhub lead summaries (one to three sentences), held-out half by id hash",
    )


def gdprhub_article_counts(rows: Sequence[dict[str, Any]], part: str = "train") -> Counter[int]:
    """Article frequencies in one split part (the realistic frequency prior)."""
    return Counter(a for r in rows if gdprhub_split(str(r["id"])) == part for a in r["gdpr_articles"])


def write_gdprhub_train(rows: Sequence[dict[str, Any]], out: Path) -> int:
    """Write the training half as extra-supervision JSONL (``id, text, articles``); returns the row count."""
    n = 0
    with out.open("w", encoding="utf-8") as fh:
        for r in rows:
            if gdprhub_split(str(r["id"])) == "train":
                fh.write(
                    json.dumps({"id": r["id"], "text": r["text"], "articles": r["gdpr_articles"]}) + "\n"
                )
                n += 1
    return n


def _labelled_rows(source: Path | Traversable) -> tuple[dict[str, str], dict[str, list[int]]]:
    """Queries and gold articles of a labelled JSONL file, each line checked (other keys are ignored)."""
    queries: dict[str, str] = {}
    gold: dict[str, list[int]] = {}
    for n, row in enumerate(_read_jsonl(source), 1):
        where = f"{source}: row {n}"
        if not isinstance(row, dict):
            raise ConfigurationError(f'{where}: expected an object {{"id", "text", "articles": [...]}}')
        missing = [k for k in ("id", "text", "articles") if k not in row]
        if missing:
            raise ConfigurationError(f"{where}: missing {', '.join(missing)}")
        qid, text, articles = str(row["id"]), row["text"], row["articles"]
        if qid in queries:
            raise ConfigurationError(f"{where}: duplicate id {qid!r}")
        if not isinstance(text, str) or not text.strip():
            raise ConfigurationError(f"{where} ({qid}): 'text' must be a non-empty string")
        if (
            not isinstance(articles, list)
            or not articles
            or not all(isinstance(a, int | str) and str(a).isdigit() and int(a) > 0 for a in articles)
        ):
            raise ConfigurationError(
                f"{where} ({qid}): 'articles' must be a non-empty list of article numbers, got {articles!r}"
            )
        queries[qid] = text
        gold[qid] = [int(a) for a in articles]
    if not queries:
        raise ConfigurationError(f"{source}: no labelled queries")
    return queries, gold


def labelled_query_set(path: Path, name: str | None = None, description: str = "") -> QuerySet:
    """A query set from a labelled JSONL file: one ``{"id", "text", "articles": [...]}`` object per line.

    Args:
        path: the file.
        name: the set's name (default: the file's stem, ``my-controls.jsonl`` → ``my-controls``).
        description: shown in reports.

    Raises:
        ConfigurationError: the file is missing, not JSONL, or a row lacks an id, a text or its articles.
    """
    if not path.is_file():
        raise ConfigurationError(f"{path}: no such file (expected labelled JSONL)")
    queries, gold = _labelled_rows(path)
    return QuerySet(name or path.stem, queries, gold, description or f"labelled queries from {path.name}")


def controls_query_set(path: Path | None = None) -> QuerySet:
    """The hand-written control set (``{"id","text","articles"}`` lines): the one shipped with the package, or
    the file at ``path``."""
    source: Path | Traversable = path if path is not None else bundled_data("controls.jsonl")
    if path is not None and not path.is_file():
        raise ConfigurationError(f"{path}: no such control set file")
    queries, gold = _labelled_rows(source)
    return QuerySet(
        "controls", queries, gold, "hand-written internal controls with the GDPR articles they implement"
    )


def _bundled_query_set(file: str, name: str, description: str) -> QuerySet:
    """A labelled set shipped in ``compliance/evaluation/data``."""
    queries, gold = _labelled_rows(bundled_data(file))
    return QuerySet(name, queries, gold, description)


def abbreviation_controls_query_set() -> QuerySet:
    """The hand-written controls that use the profession's abbreviations (DPIA, DPO, RoPA, DSAR, SCCs, TOMs, LIA,
    TIA, MFA …) shipped with the package, written for the abbreviations' reading (``compliance/evaluation/data/
    controls.md``)."""
    return _bundled_query_set(
        "abbreviation_controls.jsonl",
        "abbreviation-controls",
        "hand-written controls that use data-protection abbreviations, with their GDPR articles",
    )


def word_sense_controls_query_set() -> QuerySet:
    """The hand-written controls that use a word of the GDPR in another sense (physical access, an asset register,
    a production change, source code, TLS certificates, a configuration profile …) shipped with the package, each
    with the article a reader of the word alone would pick (``false_friend``: :func:`false_friends`), written before
    any model was scored on them (``compliance/evaluation/data/controls.md``)."""
    return _bundled_query_set(
        "word_sense_controls.jsonl",
        "word-sense-controls",
        "hand-written controls that use a GDPR word in another sense, with their GDPR articles",
    )


def list_controls_query_set() -> QuerySet:
    """The hand-written policy lists shipped with the package: a lead-in ending in a colon, then its items as a
    Word or PDF list is stored (one paragraph, an item a line: "- the provider acts only on our written
    instructions;"), with the GDPR articles the whole list implements (``compliance/evaluation/data/controls.md``)."""
    return _bundled_query_set(
        "list_controls.jsonl",
        "list-controls",
        "hand-written policy lists (a lead-in and its items) with the GDPR articles they implement",
    )


def false_friends() -> dict[str, int]:
    """Per word-sense control (:func:`word_sense_controls_query_set`): the article its false friend points to (the
    right of access for "physical access", the records of processing for an asset register)."""
    return {
        str(row["id"]): int(row["false_friend"]["article"])
        for row in _read_jsonl(bundled_data("word_sense_controls.jsonl"))
    }


def security_controls_query_set() -> QuerySet:
    """The hand-written technical and organisational security controls shipped with the package (backups,
    firewalls, patching, MFA, logging, physical access …: what a security control framework maps to the GDPR),
    written apart from the control set and after it (``compliance/evaluation/data/controls.md``)."""
    return _bundled_query_set(
        "security_controls.jsonl",
        "security-controls",
        "hand-written security controls (technical and organisational measures) with their GDPR articles",
    )


#: the hand-written sets shipped with the package beside the control set, by name (``compliance evaluate --set``)
BUNDLED_SETS: dict[str, Callable[[], QuerySet]] = {
    "security-controls": security_controls_query_set,
    "abbreviation-controls": abbreviation_controls_query_set,
    "word-sense-controls": word_sense_controls_query_set,
    "list-controls": list_controls_query_set,
}
