"""A CISO Assistant mapping library (YAML): the organisation's controls as a framework, mapped onto a law.

The library follows CISO Assistant's published library format (``backend/library/libraries/*.yaml`` of
intuitem/ciso-assistant-community): ``urn``, ``locale``, ``ref_id``, ``name``, ``version`` and ``objects`` with

* ``frameworks``: the organisation's controls (a node per document, an assessable node per linked paragraph) —
  and, for a law CISO Assistant does not ship, the law's linked provisions;
* ``requirement_mapping_sets``: controls → law and the reverse set, each ``requirement_mappings`` entry with
  ``source_requirement_urn``, ``target_requirement_urn``, ``relationship`` (``intersect``: the paragraph and the
  provision share requirements), ``rationale: semantic``, ``strength_of_relationship`` (0–10: the calibrated
  probability × 10, 10 for a link a reviewer added or accepted) and an ``annotation`` with the review status.

For the GDPR the target is CISO Assistant's own framework (``urn:intuitem:risk:framework:gdpr``, library
``urn:intuitem:risk:library:gdpr`` as a dependency): ``art:32`` → ``…:req_node:gdpr:article-32``,
``art:32/par:1`` → ``…:gdpr:32.1``, ``art:32/par:1/pt:b`` → ``…:gdpr:32.1.b``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from compliance.rules.corpus import Law
    from compliance.store.link_history import CurrentLink

__all__ = ["URN_REGEX", "ciso_assistant_library", "dump_yaml", "gdpr_node_urn", "slug"]

#: the URN pattern CISO Assistant checks library objects against (core/models.py)
URN_REGEX = (
    r"^urn:([a-zA-Z0-9_-]+):([a-zA-Z0-9_-]+):([a-zA-Z0-9_-]+)(?::([a-zA-Z0-9_-]+))?:"
    r"([0-9A-Za-z\[\]\(\)\-\._:]+)$"
)
CISO_GDPR_LIBRARY = "urn:intuitem:risk:library:gdpr"
CISO_GDPR_FRAMEWORK = "urn:intuitem:risk:framework:gdpr"
_PACKAGER = "compliance-plugin"


def slug(text: str) -> str:
    """Lower-case letters, digits and dashes (for URNs and ref_ids)."""
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s or "org"


def gdpr_node_urn(key: str) -> str | None:
    """The CISO Assistant GDPR requirement node for a provision key (None for recitals and other kinds)."""
    m = re.fullmatch(r"art:(\d+)(?:/par:(\d+))?(?:/pt:([a-z]+|\d+))?", key)
    if m is None:
        return None
    article, paragraph, point = m.groups()
    if paragraph is None:
        return f"urn:intuitem:risk:req_node:gdpr:article-{article}"
    tail = f"{article}.{paragraph}" + (f".{point}" if point else "")
    return f"urn:intuitem:risk:req_node:gdpr:{tail}"


def _strength(link: CurrentLink) -> int:
    if link.method == "manual" or link.status == "accepted":
        return 10
    return round(min(max(link.score, 0.0), 1.0) * 10)


def _key_node(key: str) -> str:
    return re.sub(r"[^0-9A-Za-z\-._]+", ".", key.replace("art:", "art-")).strip(".")


def ciso_assistant_library(
    links: Sequence[CurrentLink],
    law: Law,
    *,
    organisation: str = "Our organisation",
    version: int = 1,
    published: date | None = None,
) -> dict[str, Any]:
    """The library as data (dump it with :func:`dump_yaml`). ``links`` are links to provisions of ``law``."""
    org = slug(organisation)
    law_slug = slug(law.short_name)
    controls_fw = f"urn:compliance:risk:framework:{org}-controls"
    controls_node = f"urn:compliance:risk:req_node:{org}-controls"
    use_ciso_gdpr = law.short_name == "gdpr"
    nodes: list[dict[str, Any]] = []
    seen_docs: set[int] = set()
    seen_paras: set[int] = set()
    for link in links:
        doc_urn = f"{controls_node}:d{link.document_id}"
        if link.document_id not in seen_docs:
            seen_docs.add(link.document_id)
            nodes.append(
                {
                    "urn": doc_urn,
                    "ref_id": f"D{link.document_id}",
                    "name": link.document_source[-200:],
                    "assessable": False,
                    "depth": 1,
                }
            )
        if link.paragraph_id not in seen_paras:
            seen_paras.add(link.paragraph_id)
            nodes.append(
                {
                    "urn": f"{doc_urn}.p{link.paragraph_ordinal}",
                    "ref_id": f"D{link.document_id}.P{link.paragraph_ordinal}",
                    "name": " ".join(link.paragraph_text.split())[:200],
                    "description": link.paragraph_text,
                    "assessable": True,
                    "depth": 2,
                    "parent_urn": doc_urn,
                }
            )
    frameworks: list[dict[str, Any]] = [
        {
            "urn": controls_fw,
            "ref_id": f"{org}-controls",
            "name": f"{organisation} policies and controls",
            "description": "Paragraphs of the organisation's policies, as audited by compliance-plugin.",
            "requirement_nodes": nodes,
        }
    ]
    target_fw = CISO_GDPR_FRAMEWORK if use_ciso_gdpr else f"urn:compliance:risk:framework:{law_slug}"
    target_urn: dict[str, str] = {}
    law_nodes: list[dict[str, Any]] = []
    for link in links:
        key = link.provision_key
        if key in target_urn:
            continue
        urn = gdpr_node_urn(key) if use_ciso_gdpr else None
        if urn is None:
            urn = f"urn:compliance:risk:req_node:{law_slug}:{_key_node(key)}"
            law_nodes.append(
                {
                    "urn": urn,
                    "ref_id": key,
                    "name": (link.provision_title or key)[:200],
                    "assessable": True,
                    "depth": 1,
                }
            )
        target_urn[key] = urn
    if law_nodes and not use_ciso_gdpr:
        frameworks.append(
            {
                "urn": target_fw,
                "ref_id": law_slug,
                "name": law.title[:200] or law.short_name,
                "description": f"{law.identifier}: the provisions linked to the organisation's controls.",
                "requirement_nodes": law_nodes,
            }
        )
    forward, reverse = [], []
    for link in links:
        if use_ciso_gdpr and gdpr_node_urn(link.provision_key) is None:
            continue  # a recital: not a requirement node of CISO Assistant's GDPR framework
        source = f"{controls_node}:d{link.document_id}.p{link.paragraph_ordinal}"
        target = target_urn[link.provision_key]
        note = f"{link.status} ({link.method}, score {link.score:.2f}, link {link.link_id})"
        common = {
            "relationship": "intersect",
            "rationale": "semantic",
            "strength_of_relationship": _strength(link),
            "annotation": note,
        }
        forward.append({"source_requirement_urn": source, "target_requirement_urn": target, **common})
        reverse.append({"source_requirement_urn": target, "target_requirement_urn": source, **common})
    ref = f"{org}-controls-to-{law_slug}"
    mapping_sets = [
        {
            "urn": f"urn:compliance:risk:req_mapping_set:{ref}",
            "ref_id": ref,
            "name": f"{organisation} controls -> {law.short_name.upper()}",
            "description": "Links suggested by compliance-plugin and reviewed by the organisation.",
            "source_framework_urn": controls_fw,
            "target_framework_urn": target_fw,
            "requirement_mappings": forward,
        },
        {
            "urn": f"urn:compliance:risk:req_mapping_set:{ref}-revert",
            "ref_id": f"{ref}-revert",
            "name": f"{law.short_name.upper()} -> {organisation} controls",
            "description": "The reverse of the mapping above.",
            "source_framework_urn": target_fw,
            "target_framework_urn": controls_fw,
            "requirement_mappings": reverse,
        },
    ]
    return {
        "urn": f"urn:compliance:risk:library:{ref}",
        "locale": "en",
        "ref_id": ref,
        "name": f"{organisation} controls mapped to {law.short_name.upper()}",
        "description": f"{organisation}'s policies mapped to {law.title or law.short_name} ({law.identifier}).",
        "copyright": organisation,
        "version": version,
        "publication_date": (published or datetime.now(UTC).date()).isoformat(),
        "provider": organisation,
        "packager": _PACKAGER,
        "dependencies": [CISO_GDPR_LIBRARY] if use_ciso_gdpr else [],
        "objects": {"frameworks": frameworks, "requirement_mapping_sets": mapping_sets},
    }


def dump_yaml(library: dict[str, Any]) -> str:
    """YAML text of a library (keys in the order built, Unicode kept)."""
    import yaml

    return str(yaml.safe_dump(library, sort_keys=False, allow_unicode=True, width=110))
