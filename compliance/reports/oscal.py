"""An OSCAL mapping collection (NIST OSCAL 1.2 mapping model) of the organisation's controls onto a law.

* **source** = the organisation's controls: one ``mapping`` per document, whose ``maps`` take the document's
  paragraphs (``type: statement``, ``id-ref: doc-<document id>-p<ordinal>``) as sources;
* **target** = the law's provisions (``type: control`` for an article, ``statement`` for a paragraph or point;
  ``id-ref`` = the provision key, e.g. ``art:32`` or ``art:32/par:1``);
* ``relationship`` is ``intersects-with`` from the NIST IR 8477 set-theory vocabulary (a control paragraph and an
  article share requirements; neither is claimed to contain the other), ``matching-rationale`` is ``semantic``;
* ``confidence-score`` is the calibrated probability of a classifier link (``percentage``); a link added by a
  reviewer is ``category: high``, a retriever link (an uncalibrated similarity) ``category: medium`` or ``low``;
* ``status`` of a document's mapping is ``complete`` when every one of its links has been accepted, ``draft``
  until then; every map carries its review status as a property.

The tests validate the output against NIST's published ``oscal_complete_schema.json`` (OSCAL v1.2.3).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from compliance.rules.corpus import Law
    from compliance.store.link_history import CurrentLink

__all__ = ["OSCAL_VERSION", "PROPERTY_NS", "oscal_mapping_collection"]

OSCAL_VERSION = "1.2.3"
#: namespace of the properties this package adds (review status, score, method, model)
PROPERTY_NS = "urn:compliance-plugin:oscal"
_NAMESPACE = uuid.UUID("8b6f6a52-5c64-4c3e-9f43-6a0f3d1c2e71")


def _uuid(*parts: object) -> str:
    return str(uuid.uuid5(_NAMESPACE, "\x1f".join(map(str, parts))))


def _prop(name: str, value: object) -> dict[str, str]:
    return {"name": name, "ns": PROPERTY_NS, "value": str(value)}


def _confidence(link: CurrentLink) -> dict[str, Any]:
    if link.method == "classifier":
        return {"percentage": round(min(max(link.score, 0.0), 1.0), 4)}
    if link.method == "manual" or link.status == "accepted":
        return {"category": "high"}
    return {"category": "medium" if link.proposed_status == "proposed" else "low"}


def _clean(text: str) -> str:
    return " ".join(text.split()) or "-"


def oscal_mapping_collection(
    links: Sequence[CurrentLink],
    law: Law,
    *,
    organisation: str = "Our organisation",
    generated_at: datetime | None = None,
) -> dict[str, Any]:
    """The ``{"mapping-collection": ...}`` document for ``links`` (all to provisions of ``law``).

    Identifiers are stable UUIDv5s of what they identify (a map: its link id and decision), so an export of the
    same links twice gives the same document apart from ``last-modified``.
    """
    now = (generated_at or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    by_doc: dict[int, list[CurrentLink]] = {}
    for link in links:
        by_doc.setdefault(link.document_id, []).append(link)
    fingerprint = hashlib.sha256(
        "|".join(f"{x.link_id}:{x.status}" for x in sorted(links, key=lambda x: x.link_id)).encode()
    ).hexdigest()
    target_href = (
        law.source if law.source.startswith(("http://", "https://")) else f"urn:celex:{law.identifier}"
    )
    mappings = []
    for doc_id, doc_links in sorted(by_doc.items()):
        first = doc_links[0]
        maps = []
        for link in doc_links:
            title = f" — {link.provision_title}" if link.provision_title else ""
            maps.append(
                {
                    "uuid": _uuid("map", link.link_id, link.status),
                    "matching-rationale": "semantic",
                    "relationship": "intersects-with",
                    "sources": [
                        {
                            "type": "statement",
                            "id-ref": f"doc-{link.document_id}-p{link.paragraph_ordinal}",
                            "remarks": _clean(link.paragraph_text),
                        }
                    ],
                    "targets": [
                        {
                            "type": "control" if link.provision_kind == "article" else "statement",
                            "id-ref": link.provision_key,
                            "remarks": f"{law.short_name.upper()} {link.provision_key}{title}",
                        }
                    ],
                    "confidence-score": _confidence(link),
                    "props": [
                        _prop("review-status", link.status),
                        _prop("link-id", link.link_id),
                        _prop("method", link.method),
                        _prop("score", round(link.score, 4)),
                        *([_prop("model", link.model)] if link.model else []),
                        *([_prop("reviewer", link.reviewer)] if link.reviewer else []),
                    ],
                    **({"remarks": _clean(link.review_comment)} if link.review_comment else {}),
                }
            )
        complete = all(x.status == "accepted" for x in doc_links)
        mappings.append(
            {
                "uuid": _uuid("mapping", doc_id, law.identifier),
                "method": "hybrid",
                "matching-rationale": "semantic",
                "status": "complete" if complete else "draft",
                "source-resource": {
                    "type": "policy-document",
                    "href": f"urn:compliance-plugin:document:{doc_id}",
                    "remarks": f"{first.document_source} (version {first.document_version})",
                },
                "target-resource": {"type": "catalog", "href": target_href, "remarks": law.title},
                "maps": maps,
            }
        )
    decided = bool(links) and all(x.status == "accepted" for x in links)
    return {
        "mapping-collection": {
            "uuid": _uuid("collection", organisation, law.identifier, law.checksum, fingerprint),
            "metadata": {
                "title": f"{organisation}: controls mapped to {law.title or law.short_name}",
                "last-modified": now.isoformat().replace("+00:00", "Z"),
                "version": fingerprint[:12],
                "oscal-version": OSCAL_VERSION,
            },
            "provenance": {
                "method": "hybrid",
                "matching-rationale": "semantic",
                "status": "complete" if decided else "draft",
                "mapping-description": (
                    f"Paragraphs of {organisation}'s policies and controls mapped to the provisions of "
                    f"{law.short_name.upper()} ({law.identifier}) by compliance-plugin: suggested by a calibrated "
                    "classifier or retriever, reviewed by people; maps not yet accepted are drafts."
                ),
                "props": [_prop("links", len(links))],
            },
            "mappings": mappings
            or [
                {
                    "uuid": _uuid("mapping", "none", law.identifier),
                    "source-resource": {
                        "type": "policy-document",
                        "href": "urn:compliance-plugin:document:none",
                    },
                    "target-resource": {"type": "catalog", "href": target_href},
                    "status": "draft",
                    "maps": [
                        {
                            "uuid": _uuid("map", "none"),
                            "relationship": "no-relationship",
                            "sources": [{"type": "statement", "id-ref": "none"}],
                            "targets": [{"type": "control", "id-ref": "none"}],
                        }
                    ],
                }
            ],
        }
    }
