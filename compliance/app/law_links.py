"""Links to the other installed laws: every paragraph of the audited documents against the provisions of the EU
acts other than the GDPR (and UK acts when installed), through the document-to-law retriever.

The GDPR has its own article classifier (calibrated probabilities); the other laws are searched with
:class:`~compliance.search.LawSearch` (BM25 fused with the dense encoder over the laws' articles), and the
candidates are stored as links with method ``retriever`` — scored, with their evidence, and reviewed like the
classifier's. How a candidate becomes a link:

* the paragraph's ``top_k`` provisions of each law are candidates when they share terms with it (BM25 > 0);
* with a trained link-decision model (``compliance alerts train-decision``) its calibrated threshold decides:
  ``proposed`` at or above the threshold, ``needs-review`` in the abstain band, dropped below it; the score is
  the bi-encoder's similarity;
* without one, every candidate is stored as ``needs-review`` (a person decides) with the retrieval score.

A paragraph already linked to a law by the retriever is not searched again for that law.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from compliance.alerts.background import DEFAULT_BACKGROUND_ACTS, DEFAULT_BACKGROUND_UNITS
from compliance.connectors.roles import MAPPED_ROLES
from compliance.errors import ConfigurationError, ModelNotFoundError

if TYPE_CHECKING:  # pragma: no cover
    from compliance.linking.decision import LinkDecisionModel
    from compliance.search import LawSearch
    from compliance.store import NewLink, Store

__all__ = ["RETRIEVER_METHOD", "LawLinkConfig", "link_other_laws"]

RETRIEVER_METHOD = "retriever"
#: laws whose links come from a classifier of their own, not from the retriever
CLASSIFIED_LAWS = frozenset({"gdpr"})


@dataclass(frozen=True)
class LawLinkConfig:
    """How retriever candidates become links (stored with the audit run's stats).

    Attributes:
        top_k: candidate provisions per paragraph and law.
        min_words: shorter paragraphs (headings, page furniture) are not searched.
        dense: fuse the dense encoder with BM25 (False: BM25 alone).
        use_decision_model: let a trained link-decision model decide (when one exists).
        proposed_budget: per law, at most this many paragraphs (a count, or a share of the paragraphs searched,
            at least ``min_budget``) get a ``proposed`` link, the best-scoring first; the others' links become
            ``needs-review`` (``evidence.over_budget``). None: no budget.
        review_budget: per law, at most this many further paragraphs keep ``needs-review`` links (best first);
            the weaker ones are not stored. None: no budget.
        min_budget: the smallest budget a share gives.
        background_weight: the budgets take paragraphs in order of their best link score less this × their best
            cosine with legal text of other fields (as alert runs rank, :attr:`AlertConfig.background_weight
            <compliance.alerts.engine.AlertConfig.background_weight>`): a paragraph that reads like any law comes
            after one that reads like this one. The links' scores and decisions are unchanged. 0: no correction.
        background_acts: the law packs that text comes from.
        background_units: at most this many of their units, evenly spaced (None: all).
    """

    top_k: int = 3
    min_words: int = 4
    dense: bool = True
    use_decision_model: bool = True
    proposed_budget: float | None = 0.2
    review_budget: float | None = 0.2
    min_budget: int = 10
    background_weight: float = 0.5
    background_acts: tuple[str, ...] = DEFAULT_BACKGROUND_ACTS
    background_units: int | None = DEFAULT_BACKGROUND_UNITS

    def __post_init__(self) -> None:
        object.__setattr__(self, "background_acts", tuple(self.background_acts))
        if not 0.0 <= self.background_weight <= 1.0:
            raise ConfigurationError("background_weight must be within [0, 1]")
        if self.top_k < 1:
            raise ConfigurationError("top_k must be at least 1")
        for budget in (self.proposed_budget, self.review_budget):
            if budget is not None and (budget <= 0 or (isinstance(budget, float) and budget > 1)):
                raise ConfigurationError("a budget is a positive count or a share in (0, 1]")


def _decision_model(config: LawLinkConfig) -> LinkDecisionModel | None:
    if not config.use_decision_model:
        return None
    from compliance.alerts.engine import load_decision_model

    try:
        return load_decision_model()
    except ModelNotFoundError:
        return None


def link_other_laws(
    store: Store,
    run_id: int,
    document_ids: Sequence[int],
    laws: Sequence[str],
    *,
    config: LawLinkConfig | None = None,
    search: LawSearch | None = None,
    decision: LinkDecisionModel | None = None,
    roles: Collection[str] | None = MAPPED_ROLES,
) -> int:
    """Store retriever links from the latest versions of ``document_ids`` to the provisions of ``laws`` (short
    names of installed laws; ``gdpr`` is skipped: the classifier links it). Returns the number of links stored.
    Only paragraphs of the ``roles`` the audit maps are searched (default: statements and definitions, as for the
    GDPR; a paragraph stored before roles existed is searched); None searches every paragraph but headings.

    Raises:
        LawNotFoundError: a law is not installed (``compliance laws install NAME``).
    """
    from compliance.search import LawSearch
    from compliance.store import NewLink

    config = config or LawLinkConfig()
    wanted = [name.strip().lower() for name in laws if name.strip()]
    targets = [store.law_record(name) for name in wanted if name not in CLASSIFIED_LAWS]
    if not targets or not document_ids:
        return 0
    search = search or LawSearch(store, dense=config.dense)
    decision = decision if decision is not None else _decision_model(config)
    paragraphs = [
        p
        for p in store.iter_paragraphs(document_ids=list(document_ids))
        if p.kind != "heading"
        and len(p.text.split()) >= config.min_words
        and (roles is None or p.role is None or p.role in roles)
    ]
    stored = 0
    for record in targets:
        done = {
            x.paragraph_id
            for x in store.iter_current_links(
                document_ids=list(document_ids), law=record.identifier, method=RETRIEVER_METHOD
            )
        }
        todo = [p for p in paragraphs if p.id not in done]
        if not todo:
            continue
        law = store.get_law(record.id)
        provision_ids = store.provision_id_map(record.id)
        index = search.provisions_index()
        exclude = [i for i in index.ids if not i.startswith(f"{record.short_name}/")]
        hits_per_paragraph = index.search_many(
            [p.text for p in todo], k=config.top_k, exclude=[exclude] * len(todo)
        )
        candidates: list[tuple[Any, Any, str, int]] = []  # (paragraph, hit, provision key, rank)
        for p, hits in zip(todo, hits_per_paragraph, strict=True):
            for rank, h in enumerate(hits, start=1):
                key = str(index.documents[h.id].metadata.get("key", h.id.split("/", 1)[-1]))
                if key in provision_ids and float(h.evidence.get("bm25", 0.0)) > 0.0:
                    candidates.append((p, h, key, rank))
        if not candidates:
            continue
        link_scores: list[float] | None = None
        background: dict[int, float] = {}
        if decision is not None:
            # each paragraph and provision embedded once (a paragraph has up to top_k candidates)
            para_texts = {p.id: p.text for p, _, _, _ in candidates}
            para_rows = {pid: i for i, pid in enumerate(para_texts)}
            para_vecs = decision.encode(list(para_texts.values()))
            prov_rows = {k: i for i, k in enumerate(dict.fromkeys(k for _, _, k, _ in candidates))}
            prov_vecs = decision.encode(
                [f"{law.get(k).title or ''}\n{law.text_of(k)}".strip() for k in prov_rows]
            )
            link_scores = [
                float(para_vecs[para_rows[p.id]] @ prov_vecs[prov_rows[k]]) for p, _, k, _ in candidates
            ]
            if config.background_weight > 0.0:
                from compliance.alerts.engine import background_cosines

                cosines, _ = background_cosines(
                    law,
                    para_vecs,
                    decision,
                    acts=config.background_acts,
                    units=config.background_units,
                )
                if cosines is not None:
                    background = {pid: float(cosines[row]) for pid, row in para_rows.items()}
        new: list[NewLink] = []
        for i, (p, h, key, rank) in enumerate(candidates):
            evidence: dict[str, Any] = {
                "law": record.short_name,
                "retrieval": {k: round(float(v), 6) for k, v in h.evidence.items() if isinstance(v, float)},
                "shared_terms": [t for t, _ in index.salient_terms(p.text, h.id, n=8)],
                "provision_title": law.get(key).title or "",
                "config": asdict(config),
            }
            if link_scores is not None and decision is not None:
                verdict = decision.decide(link_scores[i])
                if verdict == "drop":
                    continue
                status = "proposed" if verdict == "propose" and rank == 1 else "needs-review"
                score = link_scores[i]
                evidence.update(
                    {
                        "decision": verdict,
                        "threshold": decision.threshold,
                        "band_lower": decision.lower,
                        "background": None if p.id not in background else round(background[p.id], 6),
                    }
                )
            else:
                status, score = "needs-review", float(h.score)
                evidence["decision"] = "review (no link-decision model: a person decides)"
            new.append(NewLink(p.id, provision_ids[key], RETRIEVER_METHOD, score, rank, evidence, status))
        if decision is not None and link_scores is not None:
            new = _apply_budget(new, len(todo), config, background)
        if new:
            store.add_links(run_id, new)
            stored += len(new)
    return stored


def _apply_budget(
    links: list[NewLink], searched: int, config: LawLinkConfig, background: Mapping[int, float] | None = None
) -> list[NewLink]:
    """One law's new links within its budgets (as alert runs do, :class:`~compliance.alerts.engine.AlertConfig`):
    paragraphs in order of their best link score (less ``config.background_weight`` × the paragraph's
    ``background`` cosine, where given); proposed links of paragraphs beyond ``proposed_budget`` become
    needs-review, and paragraphs beyond ``review_budget`` more keep no needs-review link."""
    from dataclasses import replace

    from compliance.alerts.engine import budget_count

    proposed_cap = budget_count(config.proposed_budget, searched, config.min_budget)
    review_cap = budget_count(config.review_budget, searched, config.min_budget)
    best: dict[int, float] = {}
    for link in links:
        best[link.paragraph_id] = max(best.get(link.paragraph_id, float("-inf")), link.score)
    for pid in best:
        best[pid] -= config.background_weight * (background or {}).get(pid, 0.0)
    order = sorted(best, key=lambda pid: -best[pid])
    proposing = {link.paragraph_id for link in links if link.status == "proposed"}
    with_proposed = [pid for pid in order if pid in proposing]
    keep_proposed = set(with_proposed if proposed_cap is None else with_proposed[:proposed_cap])
    rest = [pid for pid in order if pid not in keep_proposed]
    keep_review = set(rest if review_cap is None else rest[:review_cap])
    out: list[NewLink] = []
    for link in links:
        if link.paragraph_id in keep_proposed:
            out.append(link)
        elif link.paragraph_id in keep_review:
            if link.status == "proposed":
                link = replace(
                    link,
                    status="needs-review",
                    evidence={**link.evidence, "decision": "review", "over_budget": True},
                )
            out.append(link)
    return out
