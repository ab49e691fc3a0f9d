"""Law corpus: importers for official formats (Formex 4, EU JSON, UK CLML), law packs, fetching.

Public API (imported lazily; importing this package loads neither lxml nor httpx nor pydantic models)::

    parse_formex(data, source=...)  -> Law        # EU Publications Office Formex 4 (ACT, CONS.ACT)
    parse_eu_json(data, source=...) -> Law        # EUR-Lex consolidated text as JSON
    parse_clml(data, source=...)    -> Law        # legislation.gov.uk CLML
    load_law_file(path, data=None)  -> Law        # detect the format from the content, dispatch
    list_packs() / get_pack(name)   -> LawPack    # shipped YAML packs; LawPack.recital_map()
    fetch_pack_source(pack, from_path=, mirror=, timeout=, retries=, verify=) -> (bytes, source)
    install_pack(name, from_path=, mirror=, verify=) -> Law
    load_pack_law(name)             -> Law        # cached; mirror or official URL
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from compliance._lazy import lazy_exports
from compliance.rules.corpus import Law, Provision, ProvisionKind

if TYPE_CHECKING:
    from compliance.rules.clml import parse_clml
    from compliance.rules.detect import detect_format, load_law_file, parse_law
    from compliance.rules.eu_json import parse_eu_json
    from compliance.rules.fetch import (
        clear_law_cache,
        download,
        fetch_pack_source,
        install_pack,
        load_pack_law,
        resolve_mirror,
    )
    from compliance.rules.formex import parse_formex
    from compliance.rules.packs import (
        LawPack,
        PackSource,
        RecitalLink,
        apply_pack_metadata,
        find_pack_for,
        get_pack,
        list_packs,
    )
    from compliance.xml_safety import parse_xml

__all__ = [
    "Law",
    "LawPack",
    "PackSource",
    "Provision",
    "ProvisionKind",
    "RecitalLink",
    "apply_pack_metadata",
    "clear_law_cache",
    "detect_format",
    "download",
    "fetch_pack_source",
    "find_pack_for",
    "get_pack",
    "install_pack",
    "list_packs",
    "load_law_file",
    "load_pack_law",
    "parse_clml",
    "parse_eu_json",
    "parse_formex",
    "parse_law",
    "parse_xml",
    "resolve_mirror",
]

_LAZY = {
    "parse_formex": "compliance.rules.formex",
    "parse_eu_json": "compliance.rules.eu_json",
    "parse_clml": "compliance.rules.clml",
    "parse_xml": "compliance.xml_safety",
    "detect_format": "compliance.rules.detect",
    "load_law_file": "compliance.rules.detect",
    "parse_law": "compliance.rules.detect",
    "LawPack": "compliance.rules.packs",
    "PackSource": "compliance.rules.packs",
    "RecitalLink": "compliance.rules.packs",
    "find_pack_for": "compliance.rules.packs",
    "get_pack": "compliance.rules.packs",
    "list_packs": "compliance.rules.packs",
    "apply_pack_metadata": "compliance.rules.packs",
    "clear_law_cache": "compliance.rules.fetch",
    "download": "compliance.rules.fetch",
    "fetch_pack_source": "compliance.rules.fetch",
    "install_pack": "compliance.rules.fetch",
    "load_pack_law": "compliance.rules.fetch",
    "resolve_mirror": "compliance.rules.fetch",
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
