"""Retrieval evaluation tasks built from the shared development data (``settings.resolved_shared_data()``), the
package's evaluation data and the sample policies in ``examples/`` (an experiment: not part of the package).

Every task has a corpus (documents), queries, gold links, optional query dates and deterministic splits (by a
hash of the query id), so tuned parameters are never evaluated on their tuning queries.

=====================  ========================================  ==================================  ==========
task                   queries                                   corpus                              splits
=====================  ========================================  ==================================  ==========
gdpr-recitals          GDPR recitals with mapped articles        99 GDPR articles                    train/dev/test
controls               151 hand-written controls (package data)  99 GDPR articles                    dev/test
gdprhub                GDPRhub case summaries (long, [REF])      99 GDPR articles                    dev/test
gdprhub-eu             GDPRhub case summaries, dated             articles of all nine EU acts        dev/test
eu-article-act         every article of the nine EU acts         the nine acts' preambles (recitals)  dev/test
eu-preamble-articles   each act's whole preamble (9 queries)     articles of all nine EU acts        test
eprivacy-controls      ePrivacy articles + the whole directive   paragraphs of the sample policies   test
=====================  ========================================  ==================================  ==========

Gold: recital→article associations of the GDPR law pack; the controls' editorial article labels; GDPRhub's
applied articles; "same act" for the EU-act tasks (a weak but honest relation: an article belongs to the act
whose preamble motivates it); the ePrivacy alert expectations (``eprivacy_expectations.json``) for the
sample policies.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from compliance.errors import ConfigurationError
from compliance.retrieval.adapters import law_date, law_documents
from compliance.retrieval.evaluation import RetrievalEvaluator
from compliance.retrieval.types import Document

__all__ = ["TASKS", "RetrievalTask", "load_task", "split_of"]

#: the sample policies of the repository (not shipped with the package)
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
EU_ACTS = ("gdpr", "eprivacy", "led", "psd2", "aifmd", "mifid2", "red", "eecc", "nis2")


@dataclass
class RetrievalTask:
    """One evaluation task."""

    name: str
    description: str
    corpus: list[Document]
    queries: dict[str, str]
    gold: dict[str, set[str]]
    splits: dict[str, list[str]]
    query_dates: dict[str, date | None] = field(default_factory=dict)
    #: ``date_filter``: query dates are independent of the gold (the filter is not told the answer);
    #: ``must_not_alert``: paragraphs that must stay unflagged (eprivacy-controls)
    extra: dict[str, Any] = field(default_factory=dict)

    def subset(self, split: str) -> tuple[dict[str, str], dict[str, set[str]]]:
        ids = self.splits[split]
        return {q: self.queries[q] for q in ids}, {q: self.gold[q] for q in ids}

    def evaluator(self, split: str, k: int = 100) -> RetrievalEvaluator:
        queries, gold = self.subset(split)
        return RetrievalEvaluator(
            queries,
            gold,
            name=f"{self.name}/{split}",
            k=k,
            query_dates={q: self.query_dates.get(q) for q in queries},
        )


def split_of(key: str, fractions: dict[str, float]) -> str:
    """Deterministic split assignment from a sha1 of ``key`` (fractions in insertion order, summing to 1)."""
    x = int(hashlib.sha1(key.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF
    acc = 0.0
    names = list(fractions)
    for name in names:
        acc += fractions[name]
        if x < acc:
            return name
    return names[-1]


def _splits(ids: list[str], fractions: dict[str, float]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {name: [] for name in fractions}
    for q in ids:
        out[split_of(q, fractions)].append(q)
    return out


DEV_TEST = {"dev": 0.5, "test": 0.5}


# -- data access ---------------------------------------------------------------------------------------------
def shared_data() -> Path:
    from compliance.settings import get_settings

    path = get_settings().resolved_shared_data()
    if path is None:
        raise ConfigurationError("the shared development data was not found; set COMPLIANCE_SHARED_DATA")
    return Path(path)


@lru_cache(maxsize=16)
def load_act(name: str) -> Any:
    """A law from the shared data: GDPR from its Formex XML, the others from their EU JSON."""
    from compliance.rules import load_law_file

    base = shared_data() / "laws"
    if name == "gdpr":
        return load_law_file(base / "gdpr" / "gdpr-consolidated-with-corrected-preamble-en.xml")
    return load_law_file(base / "eu" / f"{name}.json")


def _gdpr_articles() -> list[Document]:
    return law_documents(load_act("gdpr"), "article")


def _gdprhub_rows() -> list[dict[str, Any]]:
    path = shared_data() / "eval" / "gdprhub_dev.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _decided(value: str | None) -> date | None:
    if not value:
        return None
    for fmt in ("%d.%m.%Y", "%Y-%m-%d"):
        try:
            return datetime.strptime(value, fmt).date()
        except ValueError:
            continue
    return None


# -- tasks ---------------------------------------------------------------------------------------------------
def gdpr_recitals() -> RetrievalTask:
    from compliance.rules import get_pack

    law = load_act("gdpr")
    by_recital: dict[int, set[int]] = {}
    for article, recitals in get_pack("gdpr").recital_map().items():
        for r in recitals:
            by_recital.setdefault(int(r), set()).add(int(article))
    queries = {
        f"gdpr/rec:{r.number}": r.text for r in law.recitals if r.number and int(r.number) in by_recital
    }
    gold = {q: {f"gdpr/art:{a}" for a in by_recital[int(q.split(":")[1])]} for q in queries}
    return RetrievalTask(
        "gdpr-recitals",
        "GDPR recital → the articles it is associated with (law-pack map)",
        _gdpr_articles(),
        queries,
        gold,
        _splits(list(queries), {"train": 0.5, "dev": 0.25, "test": 0.25}),
    )


def controls() -> RetrievalTask:
    from compliance.evaluation.queries import controls_query_set

    qs = controls_query_set()
    queries = dict(qs.queries)
    gold = {q: {f"gdpr/art:{a}" for a in articles} for q, articles in qs.gold.items()}
    return RetrievalTask(
        "controls",
        "hand-written control → GDPR articles it implements (editorial labels)",
        _gdpr_articles(),
        queries,
        gold,
        _splits(list(queries), DEV_TEST),
    )


def gdprhub() -> RetrievalTask:
    rows = _gdprhub_rows()
    queries = {r["id"]: r["text"] for r in rows}
    gold = {r["id"]: {f"gdpr/art:{a}" for a in r["gdpr_articles"]} for r in rows}
    dates = {r["id"]: _decided(r.get("decided")) for r in rows}
    return RetrievalTask(
        "gdprhub",
        "GDPRhub case facts (references masked) → GDPR articles applied",
        _gdpr_articles(),
        queries,
        gold,
        _splits(list(queries), DEV_TEST),
        dates,
    )


def gdprhub_eu() -> RetrievalTask:
    base = gdprhub()
    corpus = [d for name in EU_ACTS for d in law_documents(load_act(name), "article")]
    return RetrievalTask(
        "gdprhub-eu",
        "GDPRhub case facts → GDPR articles among the articles of nine EU acts",
        corpus,
        base.queries,
        base.gold,
        base.splits,
        base.query_dates,
    )


def _preamble(name: str) -> Document:
    law = load_act(name)
    text = law.title + "\n\n" + "\n\n".join(r.text for r in law.recitals)
    return Document(name, text, {"law": name, "kind": "preamble"}, law_date(law))


def eu_article_act() -> RetrievalTask:
    corpus = [_preamble(n) for n in EU_ACTS]
    queries: dict[str, str] = {}
    gold: dict[str, set[str]] = {}
    dates: dict[str, date | None] = {}
    for name in EU_ACTS:
        for d in law_documents(load_act(name), "article"):
            queries[d.id] = d.text
            gold[d.id] = {name}
            dates[d.id] = d.date
    return RetrievalTask(
        "eu-article-act",
        "article of an EU act → its own act among nine (by preamble)",
        corpus,
        queries,
        gold,
        _splits(list(queries), DEV_TEST),
        dates,
    )


def eu_preamble_articles() -> RetrievalTask:
    corpus = [d for name in EU_ACTS for d in law_documents(load_act(name), "article")]
    queries = {f"{n}/preamble": _preamble(n).text for n in EU_ACTS}
    gold = {f"{n}/preamble": {d.id for d in corpus if d.metadata["law"] == n} for n in EU_ACTS}
    return RetrievalTask(
        "eu-preamble-articles",
        "whole preamble of an EU act → its own articles (doc2doc)",
        corpus,
        queries,
        gold,
        {"test": list(queries)},
    )


@lru_cache(maxsize=1)
def example_paragraphs() -> tuple[Document, ...]:
    """Paragraphs of the sample policies in ``examples/`` (ids ``<file>#<ordinal>``)."""
    from compliance.connectors import parse_path

    root = EXAMPLES
    docs: list[Document] = []
    for path in sorted(root.glob("*.docx")) + sorted(root.glob("*.pdf")):
        parsed = parse_path(path)
        for p in parsed.paragraphs:
            docs.append(Document(f"{path.name}#{p.ordinal}", p.text, {"document": path.name, "kind": p.kind}))
    return tuple(docs)


def eprivacy_controls() -> RetrievalTask:
    import re

    from experiments.alert_expectations import load_expectations

    spec = load_expectations()
    corpus = list(example_paragraphs())

    def find(document: str, phrase: str) -> str:
        for d in corpus:
            if d.metadata["document"] == document and phrase in re.sub(r"\s+", " ", d.text):
                return d.id
        raise ConfigurationError(f"expectation phrase not found in examples/{document}: {phrase!r}")

    by_article: dict[str, set[str]] = {}
    must = set()
    for item in spec["must_alert"]:
        pid = find(item["document"], item["phrase"])
        must.add(pid)
        for a in item.get("eprivacy_articles", []):
            by_article.setdefault(f"eprivacy/art:{a}", set()).add(pid)
    must_not = {find(i["document"], i["phrase"]) for i in spec.get("must_not_alert", [])}
    law = load_act("eprivacy")
    arts = {d.id: d.text for d in law_documents(law, "article")}
    queries = {q: arts[q] for q in by_article if q in arts}
    whole = law_documents(law, "law")[0]
    queries["eprivacy"] = whole.text
    gold = {**{q: by_article[q] for q in queries if q != "eprivacy"}, "eprivacy": must}
    return RetrievalTask(
        "eprivacy-controls",
        "ePrivacy (articles; whole act) → sample-policy paragraphs expected to alert",
        corpus,
        queries,
        gold,
        {"test": list(queries)},
        extra={"must_not_alert": sorted(must_not)},
    )


TASKS: dict[str, Callable[[], RetrievalTask]] = {
    "gdpr-recitals": gdpr_recitals,
    "controls": controls,
    "gdprhub": gdprhub,
    "gdprhub-eu": gdprhub_eu,
    "eu-article-act": eu_article_act,
    "eu-preamble-articles": eu_preamble_articles,
    "eprivacy-controls": eprivacy_controls,
}


def load_task(name: str) -> RetrievalTask:
    try:
        return TASKS[name]()
    except KeyError as e:
        raise ConfigurationError(f"unknown retrieval task {name!r}; choose from {', '.join(TASKS)}") from e
