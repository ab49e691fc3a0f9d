"""Corrective alerts: when a law is stored, find the stored controls it concerns.

An alert run (``store.run("alerts", ...)``) takes the new law — or, for a new version of a known law, only the
articles whose text changed (provision key + text hash against the previous stored version) — and:

1. **Candidates.** Each queried article, and the queried articles together as one whole-law query, search the
   controls index (:class:`~compliance.search.LawSearch`, hybrid BM25 + dense). The union of the top
   ``candidates_per_provision`` hits per article and ``candidates_for_law`` for the whole law are candidates.
   The act is encoded once: the whole-law query's dense vector is the mean of its articles' chunk vectors.
2. **Link scores.** The link-decision bi-encoder (:mod:`compliance.linking.decision`) scores every candidate
   paragraph against every passage of the queried provisions — their numbered paragraphs and points
   (:func:`compliance.rules.passages.provision_passages`), so an alert names ``art:21/par:2/pt:j``; a recital's
   cosine is weighted down (``recital_weight``) and more so when it mostly cites another act
   (``cross_reference_discount``). A paragraph's *provision score* is the max over passages (the best-matching
   provision, and the next best ones, are kept as evidence), its *law score* the cosine with the mean of the
   passage embeddings. The ranking score fuses both: ``(1 - law_weight)·provision + law_weight·law``, less
   ``background_weight`` × the paragraph's highest cosine with legal text of other fields
   (:mod:`compliance.alerts.background`): a row or table that reads like any act ranks below a control that
   reads like this one. When the
   best passage is a recital, the alert names the article paragraph or point that recital explains — the
   article passage closest to it in the same embedding space, read from the law itself (``recital_articles``)
   — and keeps the recital as ``evidence.explained_by``: recitals explain, articles oblige.
3. **Decision.** The provision score is compared with the model's calibrated threshold and abstain band:
   ``alert`` at or above the threshold, ``review`` in the band, dropped below; one alert per control paragraph,
   and one per table (``one_alert_per_table``: the table's other rows become review items). A per-run budget
   (``alert_budget``, ``review_budget``: a count or a share of the controls searched) turns the alerts beyond it
   into review items and drops the review items beyond its own.
4. **Storage.** Alerts (and review-band alerts, ``evidence.decision == "review"``) are stored ranked, linked to
   the run, each with an ``evidence`` object: best provision (key, title, snippet), paragraph snippet and
   document, shared salient terms, scores per method, the decision and the threshold used.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from compliance.alerts.background import DEFAULT_BACKGROUND_ACTS, DEFAULT_BACKGROUND_UNITS
from compliance.errors import ConfigurationError, require_weight
from compliance.rules.addressees import AUTHORITY_WEIGHT
from compliance.rules.passages import provision_passages, windows_of
from compliance.text import snippet

#: the weight of a provision that obliges no regulated organisation (public bodies only; definitions, scope, final
#: provisions) when the provision an alert names is chosen (:attr:`AlertConfig.naming_weight`)
NAMING_WEIGHT: float | None = 0.3

if TYPE_CHECKING:  # pragma: no cover
    from compliance.linking.decision import LinkDecisionModel
    from compliance.retrieval.hybrid import HybridRetriever
    from compliance.rules.corpus import Law
    from compliance.runtime import EmbeddingSpace
    from compliance.search import LawSearch
    from compliance.store import Store
    from compliance.store.records import StoredParagraph

__all__ = [
    "AlertConfig",
    "AlertRunResult",
    "ProposedAlert",
    "background_cosines",
    "budget_count",
    "changed_provisions",
    "load_decision_model",
    "parse_budget",
    "run_alerts",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class AlertConfig:
    """The choices of an alert run (stored with the run).

    Attributes:
        candidates_per_provision: controls retrieved per queried article.
        candidates_for_law: controls retrieved for the whole-law query.
        law_weight: weight of the whole-law score in the ranking score.
        passage_words: articles are split into passages of about this many words for the bi-encoder.
        include_review: also store review-band alerts (``evidence.decision == "review"``).
        max_alerts: keep at most this many alerts (best first); None keeps all.
        snippet_chars: length of the text snippets in the evidence.
        changed_only: for a new version of a known law, query only articles whose text changed.
        include_recitals: recitals are queries too (they often name what the articles describe abstractly,
            e.g. "cookies" for the ePrivacy Directive's rule on terminal equipment).
        passage_level: ``"provision"`` (default): an article's passages are its numbered paragraphs and points
            (each with the article title), so an alert names ``art:21/par:2/pt:j``; ``"article"``: word windows of
            the whole article (the ranking before issue 13).
        recital_weight: a recital's similarity is multiplied by this when the best provision is chosen, decided
            and ranked (recitals explain, articles oblige).
        cross_reference_discount: a recital whose sentences name another act (``Regulation (EU) 2016/679``) has
            its similarity multiplied by ``1 - discount × share of such sentences`` (NIS2 recital 121 on the
            GDPR: share 0.8).
        framing_weight: the similarity of a passage of an article that frames the act rather than obliges —
            its title says "Definitions", "Scope" or "Subject matter" (GDPR Art. 4, ePrivacy Art. 2, NIS2 Art. 2
            and 6), or it is a final provision ("Amendment of Directive (EU) 2018/1972", "Repeal", "Entry into
            force", "Addressees", "Transposition", :func:`compliance.rules.addressees.is_final_provision`) — is
            multiplied by this: a definition explains a term and a scope clause says whom the act
            covers, so a control that uses the term or names the GDPR is not affected by them.
        authority_weight: the similarity of a passage whose duties all fall on public bodies — "The CSIRTs shall
            …", "the single point of contact shall forward …", "Member States shall designate …", read from the
            provision's modal clauses (:func:`compliance.rules.addressees.addresses_public_bodies`; a point is
            read with the paragraph that introduces it) — is multiplied by this: it says how the state acts, and
            a control of an organisation that reads like it is not affected by it. "Member States shall ensure
            that essential and important entities take …" obliges the entities and keeps its weight.
        naming_weight: when the provision an alert *names* is chosen, the weight of a passage that obliges no
            regulated organisation — one weighted by ``authority_weight`` (public bodies only) or by
            ``framing_weight`` (definitions, scope, the final provisions) — instead of those weights (None: the
            same weights as the score). The score, decision and rank stay as they were, so a control that reads
            like the state's duty is still ranked by how close it is; the provision put before the officer is one
            the organisation can act on whenever one comes near enough. A recital that explains such a provision
            is weighted so too. Without it, a vulnerability scan named ENISA's vulnerability database (NIS2 Art.
            12(2)) and a tiered supplier review the Cooperation Group's risk assessments (Art. 22(1))
            (docs/alerts.md, session 55).
        article_cross_reference_discount: the same discount for an article's paragraphs and points (default
            0: an article that cites another act still obliges, e.g. ePrivacy Art. 5(3) and 13(2); measured in
            docs/alerts.md).
        point_lead_words: a point's passage starts with this many words of the text that introduces it.
        within_article: how the paragraph or point is chosen once the best passage's article is known:
            ``"dense"`` (default) keeps the best passage's own provision; ``"hybrid"`` re-picks it among that
            article's passages by 0.5 · BM25 / max + 0.5 · min-max-scaled cosine (as
            :class:`~compliance.linking.provisions.ProvisionPicker`; on the NIS2 expectations it named fewer right
            points, docs/alerts.md). The score, decision and rank are not changed.
        article_evidence: the weight of an article's whole text when the article an alert names is chosen (the
            score, decision and rank stay the best passage's): each article is scored by ``(1 − w) ×`` its best
            passage's weighted similarity ``+ w ×`` its best word window of the whole article (title and text,
            ``passage_words`` words, as ``passage_level="article"`` reads it), and the named paragraph or point is
            the best passage of the best article. A short point ("access control policies and asset management;")
            alone is weak evidence of its article; the article's text around it says what the article is about
            (seed 003: passages pooled to their document). 0: the best passage's own article, as before.
        provisions_listed: each alert lists up to this many best provisions (distinct), best first.
        recital_articles: when a paragraph's best passage is a recital, the alert names the article paragraph or
            point the recital explains: the article passage of the law (any article, queried or not) whose
            embedding is closest to the recital's; the recital stays as ``evidence.explained_by``. The score,
            decision and rank are the recital's. On the GDPR, whose map says which articles each recital belongs
            to, the closest article passage is one of them for 0.79 of the mapped recitals with the shipped
            encoder and 0.60 with the untuned MiniLM (docs/alerts.md). False: the alert names the recital.
        background_acts: law packs of other fields whose units outside the GDPR's material scope are the general
            legal language a control may resemble without being concerned by the act
            (:mod:`compliance.alerts.background`); the act alerted on is never its own background.
        background_weight: the ranking score is reduced by this × a candidate's highest cosine with that text,
            so that a record row or key:value table that resembles any legal text ranks below a control that
            resembles this act in particular (docs/alerts.md). The decision (alert, review, drop) stays the
            calibrated provision score's; the budget then keeps the best ranked. 0: no correction.
        background_units: at most this many units of that text, evenly spaced (None: all of them).
        one_alert_per_table: the rows of one table (table rows of one document version under one heading) raise
            one alert, its best row's; the table's other rows that would raise one become review items
            (``evidence.same_table_as``: the best row, which the alert budget may in turn make a review item) and
            are ranked among them. A register, a schedule or a matrix repeats its column labels in every row, so
            its rows resemble the same provisions together, and an officer acts on the table once (docs/alerts.md,
            *One alert per table*). False: every row alone.
        alert_budget: at most this many ``alert`` decisions per run; the rest, in rank order, become review
            items. A float in (0, 1] is a share of the control paragraphs searched (default 0.2; at least
            ``min_budget``); None: no budget.
        review_budget: the same for review items (beyond it they are dropped).
        min_budget: the smallest budget a share gives.
        context_weight: each candidate is read with the section it stands in (seed 003 pools passages to their
            document; seed 004 lets a paragraph's neighbours speak): its vector is ``(1 − w) ×`` its own plus
            ``w ×`` the normalised mean of the control paragraphs of its section, normalised again, before it is
            compared with the act's passages, the whole act and the background — so the same words ("Each team
            confirms every quarter that these rules are followed") come nearer to a rule on cookies in a section
            on cookies than under a clean-desk policy, and a retention schedule's row stays further from an act
            about security than a control of a security standard. The decision, the ranking and the provision named all read the
            blended vector; ``evidence.scores.own_similarity`` keeps the paragraph's own cosine with the named
            passage and ``evidence.context`` the section read (docs/alerts.md, session 64). 0: the paragraph
            alone, as before.
        context_depth: how many levels of a paragraph's heading path make its section, below the headings every
            paragraph of its document shares (1: the top-level heading, "3. User Account Management" — under the
            document's title when that is a heading; 0: the whole document). With ``context_depth`` > 0 a
            paragraph under no heading is read alone: a document without structure may mix its topics. A
            section's paragraphs are those of the same document that the controls index holds (the latest
            version's statements and definitions by default), with the index's vectors (the ones the audit
            stored), so reading them embeds no audited paragraph again.
    """

    candidates_per_provision: int = 20
    candidates_for_law: int = 50
    law_weight: float = 0.3
    passage_words: int = 120
    include_review: bool = True
    max_alerts: int | None = 500
    snippet_chars: int = 300
    changed_only: bool = True
    include_recitals: bool = True
    passage_level: str = "provision"
    recital_weight: float = 0.9
    cross_reference_discount: float = 0.5
    framing_weight: float = 0.85
    authority_weight: float = AUTHORITY_WEIGHT
    naming_weight: float | None = NAMING_WEIGHT
    article_cross_reference_discount: float = 0.0
    point_lead_words: int = 0
    within_article: str = "dense"
    article_evidence: float = 0.5
    provisions_listed: int = 3
    recital_articles: bool = True
    background_acts: tuple[str, ...] = DEFAULT_BACKGROUND_ACTS
    background_weight: float = 0.5
    background_units: int | None = DEFAULT_BACKGROUND_UNITS
    one_alert_per_table: bool = True
    alert_budget: float | None = 0.2
    review_budget: float | None = 0.2
    min_budget: int = 10
    context_weight: float = 0.35
    context_depth: int = 1
    #: the languages the link decision's encoder reads: a control paragraph confidently written in another
    #: (:func:`compliance.linking.language.other_language`) raises no alert, as the audit does not map it; empty:
    #: every candidate is scored
    languages: tuple[str, ...] = ("en",)

    def __post_init__(self) -> None:
        if self.within_article not in {"hybrid", "dense"}:
            raise ConfigurationError("within_article must be 'hybrid' or 'dense'")
        if self.passage_level not in {"provision", "article"}:
            raise ConfigurationError("passage_level must be 'provision' or 'article'")
        for name in ("recital_weight", "framing_weight", "authority_weight"):
            require_weight(name, getattr(self, name))
        if self.naming_weight is not None:
            require_weight("naming_weight", self.naming_weight)
        if not 0.0 <= self.article_evidence <= 1.0:
            raise ConfigurationError("article_evidence must be within [0, 1]")
        for discount in (self.cross_reference_discount, self.article_cross_reference_discount):
            if not 0.0 <= discount <= 1.0:
                raise ConfigurationError("a cross-reference discount must be in [0, 1]")
        if self.point_lead_words < 0 or self.provisions_listed < 1:
            raise ConfigurationError("point_lead_words must be >= 0 and provisions_listed >= 1")
        for budget in (self.alert_budget, self.review_budget):
            if budget is not None and budget <= 0:
                raise ConfigurationError("an alert budget must be positive (or None for no budget)")
        object.__setattr__(self, "background_acts", tuple(self.background_acts))
        if not 0.0 <= self.background_weight <= 1.0:
            raise ConfigurationError("background_weight must be within [0, 1]")
        if self.background_units is not None and self.background_units < 1:
            raise ConfigurationError("background_units must be at least 1 (or None for all)")
        if not 0.0 <= self.context_weight < 1.0:
            raise ConfigurationError("context_weight must be within [0, 1)")
        if self.context_depth < 0:
            raise ConfigurationError("context_depth must be at least 0")
        if not 0.0 <= self.law_weight <= 1.0:
            raise ConfigurationError("law_weight must be within [0, 1]")
        if self.candidates_per_provision < 1 or self.candidates_for_law < 0:
            raise ConfigurationError("candidate counts must be positive")
        if self.passage_words < 1:
            raise ConfigurationError("passage_words must be at least 1")


@dataclass(frozen=True, slots=True)
class ProposedAlert:
    """One alert as decided by a run (before or after storage)."""

    paragraph_id: int
    provision_key: str
    score: float
    decision: str
    rank: int
    evidence: dict[str, Any]


@dataclass(frozen=True, slots=True)
class AlertRunResult:
    """What an alert run did: the run id, what was queried and the alerts stored (best first)."""

    run_id: int
    law: str
    law_id: int
    law_version: int
    queried_keys: tuple[str, ...]
    changed_only: bool
    controls_searched: int
    alerts: tuple[ProposedAlert, ...]
    seconds: float
    stats: dict[str, Any] = field(default_factory=dict)
    run_number: int | None = None  # the run's number among alert runs (``alerts:1``), as people see it

    def summary(self) -> dict[str, Any]:
        """The run in figures (webhook payloads and the CLI use it)."""
        return {
            "run_id": self.run_id,
            "run_number": self.run_number,
            "law": self.law,
            "law_version": self.law_version,
            "provisions_queried": len(self.queried_keys),
            "changed_only": self.changed_only,
            "controls_searched": self.controls_searched,
            "alerts": sum(a.decision == "alert" for a in self.alerts),
            "review": sum(a.decision == "review" for a in self.alerts),
            "seconds": round(self.seconds, 2),
        }

    def payload(self) -> dict[str, Any]:
        """The webhook body: the summary and the alerts (ids of stored paragraphs, scores, evidence)."""
        return {
            "event": "alerts.created",
            **self.summary(),
            "items": [
                {
                    "paragraph_id": a.paragraph_id,
                    "provision_key": a.provision_key,
                    "provision_label": a.evidence.get("provision_label", a.provision_key),
                    "score": a.score,
                    "decision": a.decision,
                    "rank": a.rank,
                    "document": a.evidence.get("document"),
                    "shared_terms": a.evidence.get("shared_terms", []),
                }
                for a in self.alerts
            ],
        }


# -- what changed ------------------------------------------------------------------------------------------------
def _digests(law: Law, kinds: Sequence[str]) -> dict[str, str]:
    units = [p for p in law.provisions if p.kind in kinds]
    return {
        p.key: hashlib.sha256(f"{p.title or ''}\n{law.text_of(p.key)}".encode()).hexdigest() for p in units
    }


def changed_provisions(new: Law, old: Law | None, kinds: Sequence[str] = ("article",)) -> list[str]:
    """Keys of the provisions of ``new`` (of ``kinds``: articles, recitals …) that are new or whose title or
    text differs from ``old`` — all of them when there is no ``old``."""
    current = _digests(new, kinds)
    if old is None:
        return list(current)
    before = _digests(old, kinds)
    return [key for key, digest in current.items() if before.get(key) != digest]


# -- decision model --------------------------------------------------------------------------------------------
def load_decision_model(path: str | None = None) -> LinkDecisionModel:
    """The trained link-decision model at ``path`` (default ``<model_dir>/link-decision`` when one was trained
    there, else the calibration shipped with the package).

    Raises:
        ModelNotFoundError: none trained yet (``compliance alerts train-decision``).
    """
    from compliance.linking.decision import LinkDecisionModel
    from compliance.runtime import decision_dir

    return LinkDecisionModel.load(path or decision_dir())


# -- the run ---------------------------------------------------------------------------------------------------
def _passages(law: Law, keys: Sequence[str], words: int) -> tuple[list[str], list[str]]:
    """Article texts cut into word windows of ``words`` words overlapping by a fifth; returns (texts, owning
    article key)."""
    texts: list[str] = []
    owners: list[str] = []
    for key in keys:
        prov = law.get(key)
        windows_of(f"{prov.title or ''}\n{law.text_of(key)}", key, words, texts, owners)
    return texts, owners


def _own_number(law: Law) -> str | None:
    """``2022/2555`` for CELEX ``32022L2555`` (how the act names itself in other acts' citations)."""
    ident = law.identifier or ""
    if len(ident) >= 9 and ident[0] == "3" and ident[1:5].isdigit() and ident[6:].isdigit():
        return f"{ident[1:5]}/{int(ident[6:])}"
    return None


def _passage_weights(law: Law, owners: Sequence[str], config: AlertConfig) -> tuple[np.ndarray, list[float]]:
    """Per passage: the weight its similarity is multiplied by, and the recital's cross-reference share."""
    from compliance.rules.addressees import frames_the_act, obliges_public_bodies_only
    from compliance.rules.references import foreign_reference_share

    own = _own_number(law)
    weights = np.ones(len(owners), dtype=np.float32)
    shares: list[float] = []
    cache: dict[str, float] = {}
    framing: dict[str, bool] = {}
    public: dict[str, bool] = {}
    for i, key in enumerate(owners):
        recital = key.startswith("rec:")
        discount = config.cross_reference_discount if recital else config.article_cross_reference_discount
        share = 0.0
        if discount > 0:
            if key not in cache:
                cache[key] = foreign_reference_share(law.text_of(key), own)
            share = cache[key]
        kind = config.recital_weight if recital else 1.0
        article = key.split("/", 1)[0]
        if not recital and config.framing_weight < 1.0 and article.startswith("art:"):
            if article not in framing:
                framing[article] = frames_the_act(law.get(article).title)
            if framing[article]:
                kind = config.framing_weight
        if not recital and config.authority_weight < 1.0 and key.startswith("art:"):
            if key not in public:
                public[key] = obliges_public_bodies_only(law, key)
            if public[key]:
                kind *= config.authority_weight
        weights[i] = kind * (1.0 - discount * share)
        shares.append(share)
    return weights, shares


def parse_budget(text: str) -> float | int | None:
    """A budget as written on the command line: ``none``, an integer (``40``) or a share (``0.15``).

    Raises:
        ConfigurationError: anything else, or a value that is not positive.
    """
    value = text.strip().lower()
    if value in {"none", "off", ""}:
        return None
    try:
        number: float | int = int(value) if value.isdigit() else float(value)
    except ValueError as exc:
        raise ConfigurationError(f"an alert budget is a count, a share or 'none', not {text!r}") from exc
    if number <= 0 or (isinstance(number, float) and number > 1):
        raise ConfigurationError(f"an alert budget is a positive count or a share in (0, 1], not {text!r}")
    return number


def budget_count(value: float | None, searched: int, floor: int) -> int | None:
    """A budget as a number of items: a share (a float in (0, 1]) of the ``searched`` items, at least ``floor``;
    a count as given; None for no budget."""
    if value is None:
        return None
    if value <= 1.0 and isinstance(value, float):
        return max(floor, round(value * searched))
    return int(value)


def run_alerts(
    store: Store,
    law_name: str,
    *,
    version: int | None = None,
    decision: LinkDecisionModel | None = None,
    search: LawSearch | None = None,
    config: AlertConfig | None = None,
) -> AlertRunResult:
    """Start an alert run for a stored law and store its alerts.

    Args:
        store: the database (laws, controls, runs, alerts).
        law_name: short name or identifier of the stored law.
        version: the law version to alert on (default: latest); the previous version is diffed against.
        decision: the link-decision model (default :func:`load_decision_model`).
        search: the controls search (default :class:`~compliance.search.LawSearch` on ``store``).
        config: run parameters.

    Returns:
        The run id and the stored alerts, best first.
    """
    from compliance.search import LawSearch
    from compliance.store import NewAlert

    config = config or AlertConfig()
    decision = decision or load_decision_model()
    search = search or LawSearch(store)
    record = store.law_record(law_name, version)
    law = store.get_law(record.id)
    previous = store.get_law(record.short_name, record.version - 1) if record.version > 1 else None
    kinds = ("article", "recital") if config.include_recitals else ("article",)
    keys = changed_provisions(law, previous if config.changed_only else None, kinds)
    model_info = {
        "link_decision": {
            k: decision.info.get(k)
            for k in ("base_model", "tuned", "package_version", "metrics")
            if k in decision.info
        },
        "threshold": decision.threshold,
        "band_lower": decision.lower,
        "retrieval": search.configs.controls.to_dict(),
    }
    run_config = {
        "law": record.short_name,
        "law_id": record.id,
        "law_version": record.version,
        "previous_version": (previous is not None and record.version - 1) or None,
        "alerts": asdict(config),
    }
    started = time.perf_counter()
    with store.run("alerts", run_config, model=model_info) as run:
        proposed, searched = _decide(store, law, keys, decision, search, config)
        provision_ids = store.provision_id_map(record.id)
        stored = [
            NewAlert(
                law_id=record.id,
                paragraph_id=a.paragraph_id,
                score=a.score,
                provision_id=provision_ids.get(a.provision_key),
                rank=a.rank,
                evidence=a.evidence,
            )
            for a in proposed
        ]
        store.add_alerts(run.id, stored)
        result = AlertRunResult(
            run_number=run.number,
            run_id=run.id,
            law=record.short_name,
            law_id=record.id,
            law_version=record.version,
            queried_keys=tuple(keys),
            changed_only=previous is not None and config.changed_only,
            controls_searched=searched,
            alerts=tuple(proposed),
            seconds=time.perf_counter() - started,
        )
        run.stats.update(result.summary())
    return result


def candidate_searches(
    index: Any, law: Law, keys: Sequence[str], per_provision_k: int, law_k: int
) -> tuple[list[list[Any]], list[Any]]:
    """The candidate searches of an alert run over the controls ``index``: the top ``per_provision_k`` controls
    for each provision ``keys`` (title + text) and the top ``law_k`` for the queried articles together. The
    whole-law query's dense vector pools its articles' chunks (one encoder pass over the act); BM25 reads its
    text (:func:`compliance.search.law_query_text`)."""
    from compliance.search import law_query_text

    queries = [f"{law.get(k).title or ''}\n{law.text_of(k)}".strip() for k in keys]
    articles = [i for i, k in enumerate(keys) if law.get(k).kind == "article"]  # law_query_text's parts
    unions = [(law_query_text(law, keys), articles)] if law_k and articles else []
    stage = index.stage_scores(queries, unions)
    n = len(queries)
    per_provision = index.rank(queries, {s: m[:n] for s, m in stage.items()}, k=per_provision_k)
    whole = index.rank([unions[0][0]], {s: m[n:] for s, m in stage.items()}, k=law_k)[0] if unions else []
    return per_provision, whole


def _base_encoder_sha(decision: LinkDecisionModel) -> str | None:
    """The sha256 of the base weights the link decision embeds with, when it names them (a calibrated base
    encoder, as shipped: ``encoder: {source: base, base_model_sha256: …}``); None for a fine-tuned one."""
    ref = decision.info.get("encoder")
    if not isinstance(ref, dict) or ref.get("source") != "base":
        return None
    sha = ref.get("base_model_sha256")
    return str(sha) if sha else None


def _law_vectors(decision: LinkDecisionModel, texts: Sequence[str]) -> np.ndarray:
    """The decision's vectors of a law's passages or windows: embedded once per law text and encoder and cached
    under the index directory (:func:`~compliance.linking.provisions.cached_passage_vectors`, as the audit's
    provision picker does) when the decision names its encoder's weights (a calibrated base encoder, as shipped);
    embedded every run otherwise."""
    from compliance.linking.provisions import cached_passage_vectors
    from compliance.settings import get_settings

    sha = _base_encoder_sha(decision)
    if not sha or not texts:
        return decision.encode(texts)
    length = getattr(decision.encoder, "max_seq_length", None)
    return cached_passage_vectors(
        texts,
        decision.encode,
        encoder_id=f"link-decision:{sha}:{length}",
        cache_dir=get_settings().resolved_index_dir / "provision-vectors",
    )


def _shared_space(index: HybridRetriever, decision: LinkDecisionModel) -> EmbeddingSpace | None:
    """The controls index's embedding space when the link decision embeds with the same weights and pooling (its
    un-tuned encoder is the classifier's whose forward stored the paragraphs' vectors), else None."""
    space = index.dense.encoder.space() if index.dense is not None else None
    sha = _base_encoder_sha(decision)
    if space is None or sha is None or space.pooling != "mean" or space.layer != -1:
        return None
    return space if sha == space.weights_sha256 else None


def _candidate_vectors(
    store: Store, index: HybridRetriever, decision: LinkDecisionModel, paragraphs: Sequence[StoredParagraph]
) -> np.ndarray:
    """The candidates' vectors for the link decision: the ones the audit's forward stored (the normalised mean of a
    paragraph's chunk vectors — for a paragraph within the decision's token limit exactly what the decision's
    encoder gives it, up to the forward's precision; a longer one is covered whole instead of cut at that limit)
    when the decision shares the controls index's space, so an alert run embeds no audited paragraph again; the
    decision's encoder for the rest (paragraphs stored before vectors were, or never classified)."""
    from compliance.runtime import aggregate_chunks

    out: dict[int, np.ndarray] = {}
    space = _shared_space(index, decision)
    if space is not None:
        for pid, stored in store.paragraph_vectors(space.id, [p.id for p in paragraphs]).items():
            chunks = stored.array()
            out[pid] = aggregate_chunks(chunks, np.zeros(len(chunks), dtype=np.int64), 1)[0]
    missing = [p for p in paragraphs if p.id not in out]
    if missing:
        for p, vec in zip(missing, decision.encode([p.text for p in missing]), strict=True):
            out[p.id] = vec
    if not paragraphs:
        return decision.encode([])
    return np.stack([out[p.id] for p in paragraphs])


Section = tuple[int, tuple[str, ...]]


def _sections(paragraphs: Iterable[tuple[int, int, Sequence[str]]], depth: int) -> dict[int, Section | None]:
    """The section each paragraph stands in, by paragraph id, from ``(paragraph id, document id, heading path)`` of
    whole documents: its document and the first ``depth`` headings of its path below the headings every paragraph
    of that document shares (a Markdown document's title, "# Access Control Standard", heads all of it; a Word
    document's is often not a heading at all) — 0: the whole document. None for a paragraph under no heading when
    ``depth`` > 0 (nothing says which of the document's topics it belongs with)."""
    from itertools import takewhile

    rows = [(pid, doc, tuple(path)) for pid, doc, path in paragraphs]
    paths: dict[int, list[tuple[str, ...]]] = {}
    for _, doc, path in rows:
        if path:
            paths.setdefault(doc, []).append(path)
    # the headings all of a document's paths open with
    shared = {
        doc: tuple(
            level[0] for level in takewhile(lambda same: len(set(same)) == 1, zip(*found, strict=False))
        )
        for doc, found in paths.items()
    }
    out: dict[int, Section | None] = {}
    for pid, doc, path in rows:
        if not depth:
            out[pid] = (doc, ())
        elif not path:
            out[pid] = None
        else:
            start = len(shared[doc])
            out[pid] = (doc, path[start : start + depth])
    return out


def _in_context(
    index: HybridRetriever,
    decision: LinkDecisionModel,
    paragraphs: Sequence[StoredParagraph],
    vectors: np.ndarray,
    config: AlertConfig,
) -> tuple[np.ndarray, list[int], list[Section | None]]:
    """The candidates' vectors read with their sections (:attr:`AlertConfig.context_weight`), the number of
    control paragraphs in each candidate's section (itself included) and the section.

    A section's members are the controls index's paragraphs of the candidate's document (the index holds the
    latest versions' control paragraphs, each with its document and heading path); their vectors are the index's
    own (the normalised mean of each paragraph's chunk vectors: what the audit's forward stored) when the decision
    shares its space, else the decision encoder's of the texts the index holds. Nothing is read from the store.
    """
    w, depth = config.context_weight, config.context_depth
    if w <= 0.0 or not len(paragraphs):
        return vectors, [1] * len(paragraphs), [None] * len(paragraphs)
    documents = {p.document_id for p in paragraphs}
    rows: list[tuple[int, int, Sequence[str]]] = []
    for doc in index.documents.values():
        meta = doc.metadata
        if meta.get("document_id") in documents:
            rows.append((int(doc.id), int(meta["document_id"]), meta.get("heading_path") or ()))
    where = _sections(rows, depth)
    keys = [where.get(p.id) for p in paragraphs]
    wanted = {k for k in keys if k is not None}
    members: dict[Section, list[int]] = {}
    for pid, _, _ in rows:
        key = where[pid]
        if key is not None and key in wanted:
            members.setdefault(key, []).append(pid)
    own: dict[int, np.ndarray] = {p.id: vectors[i] for i, p in enumerate(paragraphs)}
    others = [str(pid) for ids in members.values() for pid in ids if pid not in own]
    if others:
        if _shared_space(index, decision) is not None and index.dense is not None:
            found = index.dense.document_vectors(others)
        else:
            found = np.asarray(decision.encode([index.documents[i].text for i in others]))
        own.update((int(i), found[j]) for j, i in enumerate(others))
    from compliance.runtime import aggregate_chunks

    order = list(members)  # each section's normalised mean, as a text's chunks are pooled
    flat = [(j, pid) for j, key in enumerate(order) for pid in members[key]]
    centroids: dict[Section, np.ndarray] = {}
    if flat:  # no section at all when every candidate stands under no heading
        means = aggregate_chunks(
            np.stack([own[pid] for _, pid in flat]).astype(np.float32, copy=False),
            np.asarray([j for j, _ in flat], dtype=np.int64),
            len(order),
        )
        centroids = dict(zip(order, means, strict=True))
    blended = np.empty_like(vectors)
    sizes: list[int] = []
    for i, key in enumerate(keys):
        if key is None or key not in centroids:  # read alone
            blended[i] = vectors[i]
            sizes.append(1)
            continue
        mix = (1.0 - w) * vectors[i] + w * centroids[key]
        blended[i] = mix / (np.linalg.norm(mix) or 1.0)
        sizes.append(len(members[key]))
    return blended, sizes, keys


def _decide(
    store: Store,
    law: Law,
    keys: Sequence[str],
    decision: LinkDecisionModel,
    search: LawSearch,
    config: AlertConfig,
) -> tuple[list[ProposedAlert], int]:
    index = search.controls_index()
    searched = len(index)
    if not keys or not searched:
        return [], searched
    per_provision, whole = candidate_searches(
        index, law, keys, config.candidates_per_provision, config.candidates_for_law
    )
    retrieval: dict[str, dict[str, Any]] = {}
    for key, hits in zip(keys, per_provision, strict=True):
        for h in hits:
            seen = retrieval.setdefault(
                h.id, {"provision": key, "score": h.score, "evidence": dict(h.evidence)}
            )
            if h.score > seen["score"]:
                retrieval[h.id] = {"provision": key, "score": h.score, "evidence": dict(h.evidence)}
    law_retrieval = {h.id: h.score for h in whole}
    candidates = sorted(set(retrieval) | set(law_retrieval), key=int)
    paragraphs: dict[int, StoredParagraph] = {
        p.id: p for p in store.get_paragraphs([int(c) for c in candidates])
    }
    candidates = [c for c in candidates if int(c) in paragraphs]
    if config.languages:  # the encoder reads English: a German control's cosines say nothing
        from compliance.linking.language import other_language

        candidates = [
            c for c in candidates if other_language(paragraphs[int(c)].text, config.languages) is None
        ]
    if not candidates:
        return [], searched

    if config.passage_level == "article":
        texts, owners = _passages(law, keys, config.passage_words)
    else:
        texts, owners = provision_passages(
            law, keys, config.passage_words, lead_words=config.point_lead_words
        )
    weights, shares = _passage_weights(law, owners, config)
    naming = _naming_config(config)
    passage_vecs = _law_vectors(decision, texts)
    explains = (
        _recital_articles(law, texts, owners, passage_vecs, decision, config)
        if config.recital_articles and any(o.startswith("rec:") for o in owners)
        else None
    )
    chosen = [paragraphs[int(c)] for c in candidates]
    own_vecs = _candidate_vectors(store, index, decision, chosen)
    # each candidate read with its section: the decision, the ranking and the provision named see the blend
    para_vecs, section_sizes, section_of = _in_context(index, decision, chosen, own_vecs, config)
    raw = para_vecs @ passage_vecs.T  # candidates × passages
    sims = raw * weights[None, :]
    # the provision named weighs down what no organisation can act on further than the score does (``naming_weight``)
    name_sims = sims if naming is config else raw * _passage_weights(law, owners, naming)[0][None, :]
    if naming is not config and explains:  # a recital names the article it explains: one to act on, or not
        explained = [key for key, *_ in explains.values()]
        factor = dict(zip(explained, _passage_weights(law, explained, naming)[0], strict=True))
        neutral = dict(zip(explained, _passage_weights(law, explained, config)[0], strict=True))
        for i, (key, *_) in explains.items():
            name_sims[:, i] *= factor[key] / neutral[key]
    law_vec = passage_vecs.mean(axis=0)
    law_vec = law_vec / (np.linalg.norm(law_vec) or 1.0)
    law_scores = para_vecs @ law_vec
    background, background_acts = _background_similarity(law, para_vecs, decision, config)

    from compliance.rules.references import provision_label

    rerank = config.within_article == "hybrid" and config.passage_level == "provision"
    lexical = _passage_bm25(texts) if rerank else None
    named = (
        _article_choice(law, name_sims, owners, para_vecs, decision, naming)
        if config.article_evidence > 0.0 and config.passage_level == "provision"
        else name_sims.argmax(axis=1)
    )
    out: list[ProposedAlert] = []
    for row, cid in enumerate(candidates):
        link = float(sims[row].max())  # the best passage decides and ranks; ``named`` says which provision
        best = int(named[row])
        verdict = decision.decide(link)
        if verdict == "drop" or (verdict == "review" and not config.include_review):
            continue
        if lexical is not None:
            best = _within_article(best, owners, raw[row], lexical, paragraphs[int(cid)].text)
        key = owners[best]
        explained_by: dict[str, Any] | None = None
        if explains is not None and best in explains:
            recital = key
            key, article_text, closeness, article_vec, article_weight = explains[best]
            direct = float(
                para_vecs[row] @ article_vec
            )  # the paragraph's own cosine with the article passage
            explained_by = {
                "key": recital,
                "label": provision_label(recital),
                "score": round(float(sims[row, best]), 6),
                "similarity": round(float(raw[row, best]), 6),
                "closeness": round(closeness, 6),  # cosine of the recital passage with the article passage
                "snippet": snippet(texts[best], config.snippet_chars),
            }
        prov = law.get(key)
        para = paragraphs[int(cid)]
        section = section_of[row]
        fused = (1 - config.law_weight) * link + config.law_weight * float(law_scores[row])
        if background is not None:
            fused -= config.background_weight * float(background[row])
        hit = retrieval.get(cid)
        article = key.split("/", 1)[0]
        article_title = law.get(article).title
        query = f"{article_title or ''}\n{law.text_of(key)}"
        terms = [t for t, _ in index.salient_terms(query, cid, n=8)]
        # the runners-up are listed as the named provision was chosen: what no organisation can act on is weighed
        # down there too (``naming_weight``), so it is not offered beside the named provision as a better fit
        listed: list[dict[str, Any]] = []
        for j in np.argsort(-name_sims[row]):
            owner = owners[int(j)]
            if any(item["key"] == owner for item in listed):
                continue
            if float(name_sims[row, j]) < decision.lower or len(listed) >= config.provisions_listed:
                break
            listed.append(
                {
                    "key": owner,
                    "label": provision_label(owner),
                    "score": round(float(name_sims[row, j]), 6),
                    "similarity": round(float(raw[row, j]), 6),
                }
            )
        if not listed or listed[0]["key"] != key:  # the provision named (re-picked, explained) comes first
            listed = [
                {
                    "key": key,
                    "label": provision_label(key),
                    "score": round(
                        float(sims[row, best]) if explained_by is None else direct * article_weight, 6
                    ),
                    "similarity": round(float(raw[row, best]) if explained_by is None else direct, 6),
                },
                *[item for item in listed if item["key"] != key],
            ][: config.provisions_listed]
        evidence: dict[str, Any] = {
            "decision": "alert" if verdict == "propose" else "review",
            "law": law.short_name,
            "provision_key": key,
            "provision_label": provision_label(key),
            "article_key": article,
            "provision_title": prov.title or article_title or "",
            "provision_snippet": snippet(
                _passage_body(texts[best] if explained_by is None else article_text, article_title),
                config.snippet_chars,
            ),
            "explained_by": explained_by,
            "provisions": listed,
            "paragraph_id": para.id,
            "paragraph_snippet": snippet(para.text, config.snippet_chars),
            "document": para.source,
            "document_id": para.document_id,
            "heading_path": list(para.heading_path),
            "context": None  # read alone: no context weight, or under no heading
            if section is None
            else {
                "section": list(section[1]),
                "paragraphs": section_sizes[row],
                "weight": config.context_weight,
            },
            "shared_terms": terms,
            "scores": {
                "link": round(link, 6),
                "similarity": round(float(raw[row, best]), 6),
                # the paragraph alone (without its section) and the passage the alert names
                "own_similarity": round(
                    float(own_vecs[row] @ (passage_vecs[best] if explained_by is None else article_vec)), 6
                ),
                "provision_weight": round(float(weights[best]), 4),
                "cross_reference_share": round(shares[best], 4),
                "law": round(float(law_scores[row]), 6),
                "background": None if background is None else round(float(background[row]), 6),
                "fused": round(fused, 6),
                "retrieval_provision": None if hit is None else round(float(hit["score"]), 6),
                "retrieval_law": None if cid not in law_retrieval else round(float(law_retrieval[cid]), 6),
                **({} if hit is None else {f"retrieval_{k}": v for k, v in hit["evidence"].items()}),
            },
            "retrieved_by": None if hit is None else hit["provision"],
            "background_acts": list(background_acts),
            "threshold": decision.threshold,
            "band_lower": decision.lower,
        }
        out.append(ProposedAlert(para.id, key, fused, str(evidence["decision"]), 0, evidence))
    # alerts before review items, each by fused score
    out.sort(key=lambda a: (a.decision != "alert", -a.score, a.paragraph_id))
    if config.one_alert_per_table:
        out = _one_alert_per_table(out, paragraphs)
    out = _apply_budget(out, searched, config)
    if config.max_alerts is not None:
        out = out[: config.max_alerts]
    return [
        ProposedAlert(a.paragraph_id, a.provision_key, a.score, a.decision, rank, a.evidence)
        for rank, a in enumerate(out, start=1)
    ], searched


def _background_similarity(
    law: Law, para_vecs: np.ndarray, decision: LinkDecisionModel, config: AlertConfig
) -> tuple[np.ndarray | None, tuple[str, ...]]:
    """Per candidate: its highest cosine with the general legal language of :attr:`AlertConfig.background_acts`
    (:mod:`compliance.alerts.background`), and the acts read; ``(None, ())`` when the weight is 0 or no act could
    be read."""
    if config.background_weight <= 0.0:
        return None, ()
    return background_cosines(
        law, para_vecs, decision, acts=config.background_acts, units=config.background_units
    )


def background_cosines(
    law: Law,
    para_vecs: np.ndarray,
    decision: LinkDecisionModel,
    *,
    acts: Sequence[str] = DEFAULT_BACKGROUND_ACTS,
    units: int | None = DEFAULT_BACKGROUND_UNITS,
) -> tuple[np.ndarray | None, tuple[str, ...]]:
    """Per row of ``para_vecs`` (paragraphs in ``decision``'s space): its highest cosine with the units of
    ``acts`` outside personal data (:func:`compliance.alerts.background.background_text`, ``law`` itself left
    out), and the acts read; ``(None, ())`` when there are no rows or no act could be read. The units' vectors are
    embedded once per encoder (on disk with the law's passages when the decision names its weights, and in this
    process)."""
    from compliance.alerts.background import background_text

    if not acts or not len(para_vecs):
        return None, ()
    text = background_text(acts, exclude=(law.short_name, law.identifier), limit=units)
    if not text.texts:
        return None, ()
    key = (decision.encoder, hashlib.sha256("\x00".join(text.texts).encode("utf-8")).hexdigest())
    with _BACKGROUND_LOCK:
        vectors = _BACKGROUND_VECTORS.get(key)
    if vectors is None:  # embedded outside the lock: two threads at once embed twice, and agree
        vectors = _law_vectors(decision, text.texts)
        with _BACKGROUND_LOCK:
            while len(_BACKGROUND_VECTORS) >= 4:  # a few encoders per process at most: the oldest goes
                _BACKGROUND_VECTORS.pop(next(iter(_BACKGROUND_VECTORS)))
            _BACKGROUND_VECTORS[key] = vectors
    return (para_vecs @ vectors.astype(para_vecs.dtype, copy=False).T).max(axis=1), text.acts


#: the background's vectors per (encoder, texts) in this process: a process that runs alerts for several laws, or
#: with a decision whose encoder names no weights (nothing is cached on disk then), embeds them once
_BACKGROUND_VECTORS: dict[tuple[Any, str], np.ndarray] = {}
_BACKGROUND_LOCK = threading.Lock()  # the API's request and job threads run alerts in one process


def _naming_config(config: AlertConfig) -> AlertConfig:
    """The configuration whose passage weights choose the provision an alert names: ``config`` with its
    ``naming_weight`` as the weight of public bodies' duties and of framing articles, or ``config`` itself when it
    has none."""
    w = config.naming_weight
    if w is None or (w == config.authority_weight and w == config.framing_weight):
        return config
    return replace(config, authority_weight=w, framing_weight=w, naming_weight=None)


def _article_choice(
    law: Law,
    sims: np.ndarray,
    owners: Sequence[str],
    para_vecs: np.ndarray,
    decision: LinkDecisionModel,
    config: AlertConfig,
) -> np.ndarray:
    """Per candidate row of ``sims`` (weighted similarities with the provision passages ``owners``): the passage
    an alert names — the best passage of the article (or recital) that scores best by ``(1 − w) ×`` its best
    passage ``+ w ×`` its best whole-article window (:attr:`AlertConfig.article_evidence`). A recital or an
    article without paragraphs and points is cut into the same windows at both levels, so only the articles with
    finer provisions are embedded again."""
    columns: dict[str, list[int]] = {}  # article or recital → its passages' columns, in order of appearance
    for j, o in enumerate(owners):
        columns.setdefault(o.split("/", 1)[0], []).append(j)
    units = list(columns)
    passage_best = np.stack([sims[:, columns[u]].max(axis=1) for u in units], axis=1)
    whole = passage_best.copy()
    structured = [u for u in units if any(owners[j] != u for j in columns[u])]
    if structured:
        texts, article_owners = _passages(law, structured, config.passage_words)
        weights, _ = _passage_weights(law, article_owners, config)
        window_sims = (para_vecs @ _law_vectors(decision, texts).T) * weights[None, :]
        windows: dict[str, list[int]] = {}
        for j, o in enumerate(article_owners):
            windows.setdefault(o, []).append(j)
        for i, u in enumerate(units):
            if u in windows:
                whole[:, i] = window_sims[:, windows[u]].max(axis=1)
    w = config.article_evidence
    chosen = ((1.0 - w) * passage_best + w * whole).argmax(axis=1)
    named = np.empty(len(sims), dtype=np.int64)
    for row, u in enumerate(chosen):
        cols = columns[units[int(u)]]
        named[row] = cols[int(np.argmax(sims[row, cols]))]
    return named


def _recital_articles(
    law: Law,
    texts: Sequence[str],
    owners: Sequence[str],
    vecs: np.ndarray,
    decision: LinkDecisionModel,
    config: AlertConfig,
) -> dict[int, tuple[str, str, float, np.ndarray, float]]:
    """For each recital passage (its index in ``owners``): the article passage its recital explains — ``(key,
    text, cosine, vector, weight)`` of the passage of any article of the law (the queried ones' passages are
    reused, the others' encoded here) whose embedding is closest to any of the recital's passages (a long recital
    is cut into windows; the closest pair decides). The weight is the article passage's (:func:`_passage_weights`),
    for the score the alert lists beside it. Unweighted, the closest article is in the GDPR's recital map for
    0.79 of its recitals, weighted (definitions at 0.85) for 0.75 (``experiments.recital_articles``)."""
    rows = [i for i, o in enumerate(owners) if not o.startswith("rec:")]
    a_texts = [texts[i] for i in rows]
    a_owners = [owners[i] for i in rows]
    a_vecs = vecs[rows] if rows else np.empty((0, vecs.shape[1]), dtype=vecs.dtype)
    queried = {o.split("/", 1)[0] for o in a_owners}
    missing = [a.key for a in law.articles if a.key not in queried]
    if missing:
        if config.passage_level == "article":
            more_texts, more_owners = _passages(law, missing, config.passage_words)
        else:
            more_texts, more_owners = provision_passages(
                law, missing, config.passage_words, lead_words=config.point_lead_words
            )
        if more_texts:
            a_texts += more_texts
            a_owners += more_owners
            a_vecs = np.vstack([a_vecs, _law_vectors(decision, more_texts).astype(a_vecs.dtype)])
    if not a_owners:
        return {}
    a_weights, _ = _passage_weights(law, a_owners, config)
    recital_rows = [i for i, o in enumerate(owners) if o.startswith("rec:")]
    cos = vecs[recital_rows] @ a_vecs.T  # recital passages × article passages, one product
    nearest = cos.argmax(axis=1)
    best: dict[str, tuple[float, int]] = {}  # recital → (cosine, its closest article passage)
    for r, i in enumerate(recital_rows):
        j = int(nearest[r])
        if owners[i] not in best or float(cos[r, j]) > best[owners[i]][0]:
            best[owners[i]] = (float(cos[r, j]), j)
    out: dict[int, tuple[str, str, float, np.ndarray, float]] = {}
    for i in recital_rows:  # every window of a recital explains what the recital as a whole explains best
        closeness, j = best[owners[i]]
        out[i] = (a_owners[j], a_texts[j], closeness, a_vecs[j], float(a_weights[j]))
    return out


def _passage_bm25(texts: Sequence[str]) -> Any:
    from compliance.retrieval.bm25 import BM25Index
    from compliance.retrieval.types import Document

    return BM25Index.build([Document(str(i), t) for i, t in enumerate(texts)])


def _within_article(best: int, owners: Sequence[str], cosines: np.ndarray, lexical: Any, text: str) -> int:
    """The passage of the best passage's article (not a recital) that best fits ``text`` by equal parts BM25
    (over the law's passages, scaled by the article's maximum) and cosine (min-max scaled within the article);
    ``best`` itself when the article has one provision or no passage shares a term with the text."""
    owner = owners[best]
    if owner.startswith("rec:"):
        return best
    article = owner.split("/", 1)[0]
    rows = [i for i, o in enumerate(owners) if o.split("/", 1)[0] == article]
    if len({owners[i] for i in rows}) < 2:
        return best
    bm25 = np.asarray(lexical.scores(text), dtype=np.float64)[rows]
    if float(bm25.max()) <= 0.0:
        return best
    cos = np.asarray(cosines, dtype=np.float64)[rows]
    span = float(cos.max() - cos.min()) or 1.0
    mixed = 0.5 * bm25 / float(bm25.max()) + 0.5 * (cos - cos.min()) / span
    return rows[int(np.argmax(mixed))]


def _passage_body(passage: str, title: str | None) -> str:
    """A passage's text without the article title it starts with (a point's passage reads "Exceptions the
    elimination of …"; the title is shown apart, as ``provision_title``)."""
    if title and passage.startswith(title) and passage[len(title) : len(title) + 1].isspace():
        return passage[len(title) :].lstrip()
    return passage


def _one_alert_per_table(
    out: list[ProposedAlert], paragraphs: Mapping[int, StoredParagraph]
) -> list[ProposedAlert]:
    """``out`` (alerts before review items, each best first) with one alert per table: a table row whose table
    (its document version and heading path) already raised an alert becomes a review item that names that row
    (``evidence.same_table_as``); alerts first, then review items, each by score again."""
    alerted: dict[tuple[int, tuple[str, ...]], int] = {}
    kept: list[ProposedAlert] = []
    for a in out:
        para = paragraphs.get(a.paragraph_id)
        if a.decision != "alert" or para is None or para.kind != "table-row":
            kept.append(a)
            continue
        table = (para.version_id, tuple(para.heading_path))
        first = alerted.setdefault(table, a.paragraph_id)
        if first == a.paragraph_id:
            kept.append(a)
        else:
            evidence = {**a.evidence, "decision": "review", "same_table_as": first}
            kept.append(ProposedAlert(a.paragraph_id, a.provision_key, a.score, "review", 0, evidence))
    kept.sort(key=lambda a: (a.decision != "alert", -a.score, a.paragraph_id))
    return kept


def _apply_budget(out: list[ProposedAlert], searched: int, config: AlertConfig) -> list[ProposedAlert]:
    """Alerts beyond the alert budget become review items (rank order kept); review items beyond the review
    budget are dropped."""
    alerts_cap = budget_count(config.alert_budget, searched, config.min_budget)
    review_cap = budget_count(config.review_budget, searched, config.min_budget)
    kept: list[ProposedAlert] = []
    over: list[ProposedAlert] = []
    n_alerts = 0
    for a in out:
        if a.decision == "alert" and (alerts_cap is None or n_alerts < alerts_cap):
            kept.append(a)
            n_alerts += 1
        elif a.decision == "alert":
            evidence = {**a.evidence, "decision": "review", "over_budget": True}
            over.append(ProposedAlert(a.paragraph_id, a.provision_key, a.score, "review", 0, evidence))
        else:
            over.append(a)
    if review_cap is not None:
        over = over[:review_cap]
    return kept + over
