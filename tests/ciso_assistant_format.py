"""Checks of a CISO Assistant library against the format its loader accepts, written from the published code and
libraries of intuitem/ciso-assistant-community:

* ``backend/core/models.py``: ``URN_REGEX``; ``StoredLibrary.store_library_content`` needs ``urn``, ``name``,
  ``version``, ``objects`` (and reads ``ref_id``, ``locale``); ``RequirementMapping``: ``relationship`` in
  subset / intersect / equal / superset / not_related, ``rationale`` in syntactic / semantic / functional,
  ``strength_of_relationship`` a positive small integer at most 10; source and target frameworks differ;
* ``backend/library/utils.py``: a requirement node needs ``urn`` (the library checker: ``urn``, ``ref_id`` or
  ``name``; ``assessable`` a boolean; ``parent_urn`` a URN); a mapping needs ``source_requirement_urn``,
  ``target_requirement_urn`` and ``relationship``; a mapping set ``urn``, ``name``, ``source_framework_urn``,
  ``target_framework_urn``, ``requirement_mappings``;
* the shipped mapping libraries (``backend/library/libraries/mapping-*.yaml``): ``objects.requirement_mapping_sets``
  as a list, with the reverse set beside the forward one; the GDPR library's node URNs
  (``urn:intuitem:risk:req_node:gdpr:article-32``, ``…:gdpr:32.1``, ``…:gdpr:32.1.b``).
"""

from __future__ import annotations

import re
from typing import Any

URN_REGEX = (
    r"^urn:([a-zA-Z0-9_-]+):([a-zA-Z0-9_-]+):([a-zA-Z0-9_-]+)(?::([a-zA-Z0-9_-]+))?:"
    r"([0-9A-Za-z\[\]\(\)\-\._:]+)$"
)
LIBRARY_FIELDS = {
    "urn", "name", "description", "copyright", "locale", "ref_id", "dependencies", "version", "provider",
    "packager", "translations", "annotation", "objects", "publication_date",
}  # fmt: skip
OBJECT_FIELDS = {
    "threats", "reference_controls", "risk_matrix", "risk_matrices", "framework", "frameworks",
    "requirement_mapping_set", "requirement_mapping_sets", "metric_definitions",
}  # fmt: skip
NODE_FIELDS = {
    "urn", "ref_id", "name", "description", "parent_urn", "translations", "depth", "assessable",
    "reference_controls", "annotation", "typical_evidence", "implementation_groups", "threats", "questions",
}  # fmt: skip
RELATIONSHIPS = {"subset", "intersect", "equal", "superset", "not_related"}
RATIONALES = {"syntactic", "semantic", "functional"}
GDPR_NODE = re.compile(r"^urn:intuitem:risk:req_node:gdpr:(article-\d+|\d+\.\d+(\.[a-z0-9]+)?)$")


def _urn(value: Any) -> bool:
    return isinstance(value, str) and value == value.lower() and re.match(URN_REGEX, value) is not None


def check_library(lib: dict[str, Any]) -> list[str]:
    """What CISO Assistant would refuse in ``lib`` (empty when the library is acceptable)."""
    errors: list[str] = []
    for field in ("urn", "name", "version", "objects", "ref_id", "locale"):
        if field not in lib:
            errors.append(f"missing library field {field}")
    errors += [f"unknown library field {f}" for f in sorted(set(lib) - LIBRARY_FIELDS)]
    if not _urn(lib.get("urn")):
        errors.append(f"bad library urn {lib.get('urn')!r}")
    if not isinstance(lib.get("version"), int) or lib["version"] < 1:
        errors.append("version must be a positive integer")
    errors += [f"bad dependency {d!r}" for d in lib.get("dependencies", []) if not _urn(d)]
    objects = lib.get("objects") or {}
    errors += [f"unknown object kind {k}" for k in sorted(set(objects) - OBJECT_FIELDS)]
    nodes: dict[str, set[str]] = {}
    for fw in objects.get("frameworks", []):
        for field in ("urn", "ref_id", "name"):
            if not fw.get(field):
                errors.append(f"framework without {field}")
        urns = set()
        for n in fw.get("requirement_nodes", []):
            errors += [f"node {n.get('urn')}: unknown field {f}" for f in sorted(set(n) - NODE_FIELDS)]
            if not _urn(n.get("urn")):
                errors.append(f"bad node urn {n.get('urn')!r}")
            if not (n.get("ref_id") or n.get("name")):
                errors.append(f"node {n.get('urn')}: no ref_id or name")
            if "assessable" in n and not isinstance(n["assessable"], bool):
                errors.append(f"node {n.get('urn')}: assessable must be a boolean")
            if "parent_urn" in n and n["parent_urn"] not in urns:
                errors.append(f"node {n.get('urn')}: parent {n['parent_urn']} not defined before it")
            urns.add(n.get("urn"))
        nodes[fw.get("urn")] = urns
    sets = objects.get("requirement_mapping_sets", [])
    if not isinstance(sets, list) or not sets:
        errors.append("objects.requirement_mapping_sets must be a non-empty list")
        return errors
    for ms in sets:
        for field in ("urn", "ref_id", "name", "source_framework_urn", "target_framework_urn"):
            if not ms.get(field):
                errors.append(f"mapping set without {field}")
        if ms.get("source_framework_urn") == ms.get("target_framework_urn"):
            errors.append("source and target frameworks must differ")
        for fw in ("source_framework_urn", "target_framework_urn"):
            urn = ms.get(fw)
            if urn not in nodes and urn != "urn:intuitem:risk:framework:gdpr":
                errors.append(f"{fw} {urn} is neither in the library nor a dependency's")
            if urn == "urn:intuitem:risk:framework:gdpr" and "urn:intuitem:risk:library:gdpr" not in lib.get(
                "dependencies", []
            ):
                errors.append("the GDPR framework is used without the GDPR library as a dependency")
        for m in ms.get("requirement_mappings", []):
            for side, fw in (
                ("source_requirement_urn", "source_framework_urn"),
                ("target_requirement_urn", "target_framework_urn"),
            ):
                urn = m.get(side)
                known = nodes.get(ms.get(fw))
                if known is not None and urn not in known:
                    errors.append(f"{side} {urn} is not a node of {ms.get(fw)}")
                if known is None and not (isinstance(urn, str) and GDPR_NODE.match(urn)):
                    errors.append(f"{side} {urn} is not a CISO Assistant GDPR node")
            if m.get("relationship") not in RELATIONSHIPS:
                errors.append(f"bad relationship {m.get('relationship')!r}")
            if m.get("rationale") not in (None, *RATIONALES):
                errors.append(f"bad rationale {m.get('rationale')!r}")
            s = m.get("strength_of_relationship")
            if s is not None and (not isinstance(s, int) or isinstance(s, bool) or not 0 <= s <= 10):
                errors.append(f"bad strength_of_relationship {s!r}")
    return errors
