"""Validate OSCAL documents against NIST's published OSCAL v1.2.3 complete JSON schema (see
``tests/fixtures/oscal/SOURCES.md``), with the metaschema's IR 8477 relationship vocabulary on top.

The schema's patterns use Unicode classes (``\\p{L}``) that Python's ``re`` lacks, so ``pattern`` is checked
with the ``regex`` module; formats (``uri``, ``date-time`` …) are checked by jsonschema's format checker.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

SCHEMA = Path(__file__).parent / "fixtures" / "oscal" / "oscal_complete_schema.json"
SCHEMA_SHA256 = "384324105c7a817af0f65b120a963146caa0e0d55d969cf0daf60e063b87a206"
#: allowed ``relationship`` values in the OSCAL namespace (oscal_mapping-common metaschema, NIST IR 8477)
IR8477_RELATIONSHIPS = {
    "equivalent-to",
    "equal-to",
    "subset-of",
    "superset-of",
    "intersects-with",
    "no-relationship",
}


@lru_cache(maxsize=2)
def _validator(root: str | None = None) -> Any:
    import regex
    from jsonschema import Draft7Validator, validators
    from jsonschema.exceptions import ValidationError

    def pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Any:
        if validator.is_type(instance, "string") and not regex.search(patrn, instance):
            yield ValidationError(f"{instance!r} does not match {patrn!r}")

    cls = validators.extend(Draft7Validator, {"pattern": pattern})
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    if root is not None:  # one model's root element, so that errors are reported where they are
        schema = {"$ref": f"#/definitions/{root}", "definitions": schema["definitions"]}
    return cls(schema, format_checker=Draft7Validator.FORMAT_CHECKER)


def validate_oscal(document: dict[str, Any]) -> list[str]:
    """Every schema violation (``path: message``), plus relationships outside the IR 8477 vocabulary."""
    if set(document) - {"$schema"} != {"mapping-collection"}:
        return [f"expected one 'mapping-collection' root, got {sorted(document)}"]
    inner = _validator("oscal-complete-oscal-mapping:mapping-collection")
    errors = [
        "mapping-collection/" + "/".join(map(str, e.absolute_path)) + f": {e.message[:300]}"
        for e in inner.iter_errors(document["mapping-collection"])
    ]
    if not errors and not _validator().is_valid(document):  # the complete schema's own root check
        errors.append("not valid under the complete schema's root")
    for mapping in document.get("mapping-collection", {}).get("mappings", []):
        for m in mapping.get("maps", []):
            if "ns" not in m and m.get("relationship") not in IR8477_RELATIONSHIPS:
                errors.append(f"maps/{m.get('uuid')}: relationship {m.get('relationship')!r} is not IR 8477")
    return errors
