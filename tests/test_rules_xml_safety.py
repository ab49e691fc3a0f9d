"""The hardened XML entry point refuses entity tricks and reports every failure as CorpusFormatError."""

from __future__ import annotations

import pytest

from compliance.errors import CorpusFormatError
from compliance.rules import load_law_file, parse_clml, parse_formex, parse_xml

XXE = b"""<?xml version="1.0"?>
<!DOCTYPE ACT [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<ACT><ENACTING.TERMS><ARTICLE><TI.ART>Article 1</TI.ART><ALINEA>&xxe;</ALINEA></ARTICLE></ENACTING.TERMS></ACT>
"""

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<ACT><ENACTING.TERMS><ARTICLE><TI.ART>Article 1</TI.ART><ALINEA>&lol9;</ALINEA></ARTICLE></ENACTING.TERMS></ACT>
"""

PARAMETER_ENTITY = b"""<?xml version="1.0"?>
<!DOCTYPE Legislation [<!ENTITY % remote SYSTEM "http://127.0.0.1:9/evil.dtd"> %remote;]>
<Legislation xmlns="http://www.legislation.gov.uk/namespaces/legislation"/>
"""

UTF16_XXE = (
    XXE.decode("ascii").replace('version="1.0"?>', 'version="1.0" encoding="UTF-16"?>').encode("utf-16")
)


@pytest.mark.parametrize(
    "data", [XXE, BILLION_LAUGHS, PARAMETER_ENTITY, UTF16_XXE], ids=["xxe", "billion-laughs", "pe", "utf16"]
)
def test_entity_declarations_are_refused(data: bytes) -> None:
    with pytest.raises(CorpusFormatError, match="entities") as info:
        parse_xml(data, source="evil.xml")
    assert info.value.source == "evil.xml"


def test_importers_refuse_xxe_through_the_same_gate(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(CorpusFormatError, match="entities"):
        parse_formex(XXE, source="x.xml")
    with pytest.raises(CorpusFormatError, match="entities"):
        parse_clml(PARAMETER_ENTITY, source="x.xml")
    path = tmp_path / "lol.xml"
    path.write_bytes(BILLION_LAUGHS)
    with pytest.raises(CorpusFormatError, match="entities"):
        load_law_file(path)


def test_plain_doctype_without_entities_is_allowed() -> None:
    root = parse_xml(b'<?xml version="1.0"?><!DOCTYPE ACT SYSTEM "formex.dtd"><ACT/>', source="ok.xml")
    assert root.tag == "ACT"


def test_external_dtd_is_not_fetched_and_undefined_entity_fails() -> None:
    data = b'<!DOCTYPE ACT SYSTEM "http://127.0.0.1:9/x.dtd"><ACT>&undefined;</ACT>'
    with pytest.raises(CorpusFormatError):
        parse_xml(data, source="u.xml")


@pytest.mark.parametrize(
    "data", [b"", b"\n\n", b"<a>", b"<a></b>", b"\x00\x01\x02", b"<?xml version='1.0'?>"]
)
def test_malformed(data: bytes) -> None:
    with pytest.raises(CorpusFormatError):
        parse_xml(data, source="m.xml")


def test_deeply_nested_document_is_refused() -> None:
    depth = 20_000  # beyond libxml2's default depth limit, which huge_tree=False keeps
    data = b"<a>" * depth + b"</a>" * depth
    with pytest.raises(CorpusFormatError):
        parse_xml(data, source="deep.xml")
