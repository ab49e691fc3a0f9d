"""When the model or a law changes: what happens to the links people already reviewed.

* :func:`rescore_documents` (``compliance audit --rescore``) classifies every paragraph of the documents again
  (with the model given: a new one, or the same one after ``calibrate --from-reviews``), stores the new links as
  a new run, and compares them with the links that were current before: links gained, lost and re-ranked.
  Decisions are not lost: a decided link's decision is carried over to the new link of the same paragraph and
  provision — except an accepted link whose supporting score fell below the review band's upper edge (or that
  the new model no longer proposes at all), which becomes ``needs-review`` with the reason.
* :func:`reopen_links_after_law_change` runs when a new version of a law is stored: only the current links to
  provisions whose text (or title) changed are re-opened as ``needs-review``, with the reason.

Both record their decisions as reviews by the system (``source`` ``rescore`` / ``carry-over`` /
``law-change``), so the history shows who — or what — decided, when, and why.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compliance.app.links import LinkDiff, LinkState, diff_links, link_states
from compliance.connectors.roles import MAPPED_ROLES

if TYPE_CHECKING:  # pragma: no cover
    from compliance.app.audit import AuditReport
    from compliance.app.ingest import OnError, Source
    from compliance.linking.classifier_links import ClassifierLinkConfig
    from compliance.models.classifier import ArticleClassifier
    from compliance.store import Store

__all__ = ["SYSTEM_REVIEWER", "RescoreReport", "reopen_links_after_law_change", "rescore_documents"]

#: the reviewer name of decisions the system records
SYSTEM_REVIEWER = "compliance (system)"
_KINDS = ("article", "paragraph", "point", "recital", "annex")


@dataclass
class RescoreReport:
    """The new audit run, the diff against the links current before it, and what happened to decisions."""

    audit: AuditReport
    diff: LinkDiff
    carried_over: int
    flagged: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.audit.to_dict(),
            "rescore": {
                **self.diff.to_dict(),
                "carried_over": self.carried_over,
                "flagged_needs_review": self.flagged,
            },
        }


def rescore_documents(
    store: Store,
    sources: Iterable[Source],
    classifier: ArticleClassifier,
    *,
    config: ClassifierLinkConfig | None = None,
    relative_to: Path | None = None,
    recursive: bool = True,
    on_error: OnError | None = None,
    laws: tuple[str, ...] = (),
    roles: Collection[str] | None = MAPPED_ROLES,
    processes: int | None = None,
) -> RescoreReport:
    """Audit ``sources`` again, classifying every paragraph, and reconcile the reviews (see the module doc);
    ``processes`` as for :func:`~compliance.app.audit.audit_documents`."""
    from compliance.app.audit import audit_documents
    from compliance.store import NewLink
    from compliance.store.link_history import NewReview

    # what a diff and the carried-over decisions need of the links current before, held as LinkState (no
    # texts, no evidence): a large audit's links are not held whole twice
    before_all = link_states(store.iter_current_links(method="classifier"))
    report = audit_documents(
        store,
        sources,
        classifier,
        config=config,
        relative_to=relative_to,
        recursive=recursive,
        on_error=on_error,
        processes=processes,
        laws=laws,
        roles=roles,
        reclassify=True,
    )
    band = tuple(report.model.get("review_band") or classifier.config.review_band)
    low, high = float(band[0]), float(band[1])
    after = link_states(store.iter_current_links(run_id=report.run_id, method="classifier"))
    scored = {key[0] for key in after}
    before = {key: x for key, x in before_all.items() if key[0] in scored}
    del before_all
    diff = diff_links(before.values(), after.values(), run_a=0, run_b=report.run_id, review_band=(low, high))
    reviews: list[NewReview] = []
    flagged: list[dict[str, Any]] = []
    lost_accepted: list[LinkState] = []
    for old in before.values():
        decided = old.reviewer is not None and old.status in ("accepted", "rejected", "needs-review")
        if not decided:
            continue
        new = after.get(old.key)
        if new is None:
            if old.status == "accepted":
                lost_accepted.append(old)
            continue
        if old.status == "accepted" and new.score < high:
            reason = (
                f"accepted on link {old.link_id} (score {old.score:.2f}); the new model's score {new.score:.2f} "
                f"is below the review band ({low:.2f}–{high:.2f})"
            )
            reviews.append(NewReview(new.link_id, "needs-review", SYSTEM_REVIEWER, reason, "rescore"))
            flagged.append({"link_id": new.link_id, "previous_link_id": old.link_id, "reason": reason})
        else:
            note = f"carried over from link {old.link_id} ({old.status} by {old.reviewer})"
            reviews.append(NewReview(new.link_id, old.status, SYSTEM_REVIEWER, note, "carry-over"))
    if lost_accepted:
        # the new model no longer proposes these: store them with its own score so the decision stays visible;
        # only these links are read whole again (their paragraph's text, the provision)
        whole = {
            x.link_id: x
            for x in store.current_links(link_ids=[x.link_id for x in lost_accepted], current_only=False)
        }
        lost = [whole[x.link_id] for x in lost_accepted]
        texts = {x.paragraph_id: x.paragraph_text for x in lost}
        order = list(texts)
        ranked = classifier.rank([texts[p] for p in order], top_k=len(classifier.labels))
        score_of = {
            (pid, f"art:{s.article}"): (s.score, s.rank)
            for pid, scores in zip(order, ranked, strict=True)
            for s in scores
        }
        kept = []
        for old_link in lost:
            head = old_link.provision_key.split("/", 1)[0]
            score, rank = score_of.get((old_link.paragraph_id, head), (0.0, None))
            evidence = {
                "model": classifier.identity,
                "article": old_link.article,
                "title": old_link.provision_title,
                "kept_from_link": old_link.link_id,
                "reason": "accepted earlier; below the review band now",
            }
            kept.append(
                (
                    old_link,
                    NewLink(
                        old_link.paragraph_id,
                        old_link.provision_id,
                        "classifier",
                        score,
                        rank,
                        evidence,
                        "needs-review",
                    ),
                )
            )
        store.add_links(report.run_id, [n for _, n in kept])
        fresh = {
            (x.paragraph_id, x.provision_key): x.link_id
            for x in store.iter_current_links(
                run_id=report.run_id, method="classifier", document_ids=sorted({x.document_id for x in lost})
            )
        }
        for old_link, n in kept:
            # a store that refuses a second identical link (same paragraph, provision, method and model) keeps
            # the old one: the decision is then re-opened on it
            link_id = fresh.get((old_link.paragraph_id, old_link.provision_key), old_link.link_id)
            reason = (
                f"accepted on link {old_link.link_id} (score {old_link.score:.2f}); the new model no longer "
                f"proposes it (score {n.score:.2f}, below the review band {low:.2f}–{high:.2f})"
            )
            reviews.append(NewReview(link_id, "needs-review", SYSTEM_REVIEWER, reason, "rescore"))
            flagged.append({"link_id": link_id, "previous_link_id": old_link.link_id, "reason": reason})
    if reviews:
        store.add_reviews(reviews)
    carried = sum(r.source == "carry-over" for r in reviews)
    return RescoreReport(report, diff, carried, flagged)


def reopen_links_after_law_change(store: Store, law: str, version: int | None = None) -> list[dict[str, Any]]:
    """Re-open (``needs-review``) the current links to provisions of the previous version(s) of ``law`` whose
    text or title differs in ``version`` (default: the latest), and links to provisions it no longer has.
    Links to unchanged provisions keep their decision. Returns what was re-opened, with the reason.
    """
    from compliance.alerts.engine import changed_provisions
    from compliance.store.link_history import NewReview

    record = store.law_record(law, version)
    if record.version <= 1:
        return []
    new_law = store.get_law(record.id)
    keys = {p.key for p in new_law.provisions}
    reopened: list[dict[str, Any]] = []
    reviews: list[NewReview] = []
    changed_by_law: dict[int, set[str]] = {}
    # the links read one at a time and only what is compared kept (a law linked from a whole audit's paragraphs
    # is not held whole); the older versions are read after the links' read has ended
    held = [
        (link.link_id, link.law_id, link.law_version, link.provision_key, link.status)
        for link in store.iter_current_links(law=record.identifier)
        if link.law_version < record.version and link.status != "needs-review"
    ]
    for link_id, law_id, law_version, provision_key, status in held:
        if law_id not in changed_by_law:
            old_law = store.get_law(law_id)
            changed_by_law[law_id] = set(changed_provisions(new_law, old_law, _KINDS))
        if provision_key not in keys:
            reason = f"{record.short_name} version {record.version} no longer has {provision_key}"
        elif provision_key in changed_by_law[law_id]:
            reason = (
                f"the text of {provision_key} changed in {record.short_name} version {record.version} "
                f"(the link was made against version {law_version})"
            )
        else:
            continue
        reviews.append(NewReview(link_id, "needs-review", SYSTEM_REVIEWER, reason, "law-change"))
        reopened.append({"link_id": link_id, "previous_status": status, "reason": reason})
    if reviews:
        store.add_reviews(reviews)
    return reopened
