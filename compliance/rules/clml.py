"""Importer for UK legislation in CLML (Crown Legislation Markup Language), the XML of legislation.gov.uk.

Schema: https://www.legislation.gov.uk/schema/legislation.xsd (namespace
``http://www.legislation.gov.uk/namespaces/legislation``; metadata in ``ukm:`` and Dublin Core ``dc:``).

Elements used:

* ``Legislation`` (root, ``IdURI``/``DocumentURI`` attributes) → identifier ``uksi/2003/2426``;
  ``ukm:Metadata`` → ``dc:title``, ``ukm:PrimaryMetadata``/``ukm:SecondaryMetadata`` with
  ``ukm:DocumentClassification/ukm:DocumentMainType``, ``ukm:Year``, ``ukm:Number``, ``ukm:Made``,
  ``ukm:EnactmentDate``, ``ukm:ComingIntoForce/ukm:DateTime``;
* ``Primary`` (Acts) or ``Secondary`` (statutory instruments) → ``Body`` and ``Schedules``;
* ``Part`` / ``Chapter`` (``Number``, ``Title``) → provisions of kind part / chapter; ``Pblock`` (a cross-heading)
  → kind section;
* ``P1group`` (``Title``) + ``P1`` (``Pnumber``) → a section of an Act or a regulation of an SI, stored as kind
  ``article`` with key ``art:<n>`` so that every law navigates the same way;
* ``P2`` (subsection/paragraph "(1)") → paragraph; ``P3``/``P4`` ("(a)", "(i)") → points;
* ``Schedule`` → annex (whole text); inline ``Text``, ``Emphasis``, ``Citation``, ``Character`` …;
  ``CommentaryRef``, ``FootnoteRef``, ``Commentaries`` and ``Footnotes`` are left out of the text.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from compliance.errors import CorpusFormatError
from compliance.rules.building import (
    ProvisionList,
    normalise_lines,
    normalise_space,
    parse_iso_date,
    sha256_hex,
)
from compliance.rules.corpus import Law
from compliance.xml_safety import local_name, parse_xml

if TYPE_CHECKING:
    from lxml import etree

__all__ = ["CLML_NS", "parse_clml"]

CLML_NS = "http://www.legislation.gov.uk/namespaces/legislation"
UKM_NS = "http://www.legislation.gov.uk/namespaces/metadata"
DC_NS = "http://purl.org/dc/elements/1.1/"

_BREAK = "\x00"
_BLOCK = {
    "P", "Para", "Text", "P1", "P2", "P3", "P4", "P5", "P6", "P1para", "P2para", "P3para", "P4para", "P5para",
    "ListItem", "UnorderedList", "OrderedList", "BlockAmendment", "BlockText", "Tabular", "tr", "Title",
    "Number", "TitleBlock", "ScheduleBody", "Reference",
}  # fmt: skip
_SKIPPED = {
    "CommentaryRef",
    "FootnoteRef",
    "Commentaries",
    "Footnotes",
    "Footnote",
    "MarginNote",
    "MarginNoteRef",
}
_CHARACTERS = {
    "EmDash": "—", "EnDash": "–", "NonBreakingSpace": " ", "Ellipsis": "…", "LinePunctuation": "—",
    "DotPadding": " ",
}  # fmt: skip
_LABEL_LINE = re.compile(r"(?m)^(\([0-9A-Za-z]+\)|\d+[A-Za-z]?\.?)\n")
_LABELLED = {"P2": "({})", "P3": "({})", "P4": "({})", "P5": "({})", "P6": "({})"}
_TYPE_PREFIX = {
    "UnitedKingdomPublicGeneralAct": "ukpga",
    "UnitedKingdomStatutoryInstrument": "uksi",
    "ScottishAct": "asp",
    "ScottishStatutoryInstrument": "ssi",
    "WelshStatutoryInstrument": "wsi",
    "NorthernIrelandStatutoryRule": "nisr",
    "UnitedKingdomLocalAct": "ukla",
}


def _in_ns(el: etree._Element, ns: str) -> bool:
    tag = el.tag
    return isinstance(tag, str) and tag.startswith("{" + ns + "}")


def _render_into(el: etree._Element, out: list[str], skip: set[etree._Element]) -> None:
    name = local_name(el)
    if not name or name in _SKIPPED or el in skip or _in_ns(el, UKM_NS):
        return
    if name == "Character":
        out.append(_CHARACTERS.get(el.get("Name", ""), ""))
        return
    if name == "Pnumber":
        parent = el.getparent()
        label = normalise_space("".join(el.itertext()))
        pattern = _LABELLED.get(local_name(parent) if parent is not None else "", "{}")
        out.append(pattern.format(label) + " ")
        return
    block = name in _BLOCK
    if block:
        out.append(_BREAK)
    if el.text:
        out.append(el.text)
    for child in el:
        _render_into(child, out, skip)
        if child.tail:
            out.append(child.tail)
    if name in ("td", "th"):
        out.append(" ")
    if block:
        out.append(_BREAK)


def render(el: etree._Element, *, skip: set[etree._Element] | None = None) -> str:
    """Text of a CLML element, one line per block, without commentary and footnote references."""
    out: list[str] = []
    _render_into(el, out, skip or set())
    raw = re.sub(r"\s+", " ", "".join(out)).replace(_BREAK, "\n")
    # a number on a line of its own belongs to the block it introduces: "(a)\ntext" → "(a) text"
    return _LABEL_LINE.sub(r"\1 ", normalise_lines(raw))


def _kids(el: etree._Element, name: str) -> list[etree._Element]:
    return [c for c in el if local_name(c) == name and _in_ns(c, CLML_NS)]


def _kid(el: etree._Element, name: str) -> etree._Element | None:
    found = _kids(el, name)
    return found[0] if found else None


def _text(el: etree._Element | None) -> str:
    return normalise_space(render(el)) if el is not None else ""


def _pnumber(el: etree._Element) -> str:
    pn = _kid(el, "Pnumber")
    return normalise_space("".join(pn.itertext())).strip("(). ") if pn is not None else ""


def _number_of(heading: str, word: str) -> str:
    """``"PART 2"`` → ``"2"``; ``"CHAPTER 1"`` → ``"1"``."""
    return re.sub(rf"^{word}\s*", "", heading, flags=re.I).strip() or heading


class _ClmlReader:
    def __init__(self, source: str) -> None:
        self.source = source
        self.provs = ProvisionList(source)
        self.headings = 0

    def container(self, el: etree._Element, parent_key: str | None) -> None:
        for child in el:
            if not _in_ns(child, CLML_NS):
                continue
            name = local_name(child)
            if name == "Part":
                self.division(child, parent_key, "part", "part", "part")
            elif name == "Chapter":
                self.division(child, parent_key, "chapter", "chp", "chapter")
            elif name in ("Pblock", "PsubBlock"):
                self.cross_heading(child, parent_key)
            elif name == "P1group":
                self.p1group(child, parent_key)
            elif name == "P1":
                self.p1(child, parent_key, None)

    def division(self, el: etree._Element, parent_key: str | None, kind: str, prefix: str, word: str) -> None:
        number = _number_of(_text(_kid(el, "Number")), word) or str(len(self.provs) + 1)
        own = f"{prefix}:{number}"
        key = self.provs.unique_key(f"{parent_key}/{own}" if parent_key else own)
        self.provs.add(kind, key, number, "", title=_text(_kid(el, "Title")), parent_key=parent_key)  # type: ignore[arg-type]
        self.container(el, key)

    def cross_heading(self, el: etree._Element, parent_key: str | None) -> None:
        self.headings += 1
        own = f"hd:{self.headings}"
        key = self.provs.unique_key(f"{parent_key}/{own}" if parent_key else own)
        self.provs.add("section", key, None, "", title=_text(_kid(el, "Title")), parent_key=parent_key)
        self.container(el, key)

    def p1group(self, el: etree._Element, parent_key: str | None) -> None:
        title = _text(_kid(el, "Title")) or None
        p1s = _kids(el, "P1")
        if not p1s:  # a group holding only text
            return
        for p1 in p1s:
            self.p1(p1, parent_key, title)

    def p1(self, p1: etree._Element, parent_key: str | None, title: str | None) -> None:
        number = _pnumber(p1) or str(sum(1 for p in self.provs.to_tuple() if p.kind == "article") + 1)
        key = self.provs.unique_key(f"art:{number}")
        paras = [p2 for p1para in _kids(p1, "P1para") for p2 in _kids(p1para, "P2")]
        pnum = _kid(p1, "Pnumber")
        if paras:
            stray = render(p1, skip=set(paras) | ({pnum} if pnum is not None else set()))
            self.provs.add("article", key, number, stray, title=title, parent_key=parent_key)
            for i, p2 in enumerate(paras, start=1):
                pn = _pnumber(p2) or str(i)
                pkey = self.provs.unique_key(f"{key}/par:{pn}")
                own_pn = _kid(p2, "Pnumber")
                self.provs.add(
                    "paragraph",
                    pkey,
                    pn,
                    render(p2, skip={own_pn} if own_pn is not None else None),
                    parent_key=key,
                )
                self.points(p2, pkey)
        else:
            self.provs.add(
                "article", key, number, render(p1, skip={pnum} if pnum is not None else None), title=title,
                parent_key=parent_key,
            )  # fmt: skip
            self.points(p1, key)

    def points(self, el: etree._Element, parent_key: str) -> None:
        level = {"P1": "P2", "P2": "P3", "P3": "P4", "P4": "P5", "P5": "P6"}.get(local_name(el))
        if level is None:
            return
        wanted = "P3" if level == "P2" else level  # under a P1 without P2, points are P3
        for para in el:
            if not local_name(para).endswith("para"):
                continue
            for child in para:
                if local_name(child) != wanted or not _in_ns(child, CLML_NS):
                    continue
                number = _pnumber(child) or None
                own = f"pt:{number}" if number else "pt:item"
                key = self.provs.unique_key(f"{parent_key}/{own}")
                deeper = {d for d in child.iter() if local_name(d) in ("P4", "P5", "P6") and d is not child}
                pn = _kid(child, "Pnumber")
                skip = deeper | ({pn} if pn is not None else set())
                self.provs.add("point", key, number, render(child, skip=skip), parent_key=parent_key)
                self.points(child, key)

    def schedules(self, el: etree._Element) -> None:
        for schedule in (s for s in el.iter() if local_name(s) == "Schedule" and _in_ns(s, CLML_NS)):
            heading = _text(_kid(schedule, "Number"))
            number = _number_of(heading, "schedule") or str(len(self.provs) + 1)
            title_block = _kid(schedule, "TitleBlock")
            title = (
                _text(_kid(title_block, "Title"))
                if title_block is not None
                else _text(_kid(schedule, "Title"))
            )
            body = _kid(schedule, "ScheduleBody")
            text = render(body) if body is not None else ""
            key = self.provs.unique_key(f"sch:{number}")
            self.provs.add("annex", key, number, text, title=title or heading or None)


def _meta(root: etree._Element) -> tuple[etree._Element | None, etree._Element | None]:
    meta = next((c for c in root if local_name(c) == "Metadata" and _in_ns(c, UKM_NS)), None)
    if meta is None:
        return None, None
    kind = next(
        (c for c in meta if _in_ns(c, UKM_NS) and local_name(c) in ("PrimaryMetadata", "SecondaryMetadata")),
        None,
    )
    return meta, kind


def _ukm(el: etree._Element | None, *path: str) -> etree._Element | None:
    current = el
    for name in path:
        if current is None:
            return None
        current = next((c for c in current if local_name(c) == name and _in_ns(c, UKM_NS)), None)
    return current


def _identifier(root: etree._Element, kind_meta: etree._Element | None) -> str | None:
    for attr in ("IdURI", "DocumentURI"):
        uri = root.get(attr) or ""
        m = re.search(r"legislation\.gov\.uk/(?:id/)?([a-z]+/\d{4}/\d+)", uri)
        if m:
            return m.group(1)
    main_type = _ukm(kind_meta, "DocumentClassification", "DocumentMainType")
    year = _ukm(kind_meta, "Year")
    number = _ukm(kind_meta, "Number")
    prefix = _TYPE_PREFIX.get(main_type.get("Value", "")) if main_type is not None else None
    if prefix and year is not None and number is not None:
        return f"{prefix}/{year.get('Value')}/{number.get('Value')}"
    return None


def parse_clml(data: bytes, *, source: str) -> Law:
    """Parse a legislation.gov.uk CLML document (an Act or a statutory instrument) into a :class:`Law`.

    Raises:
        CorpusFormatError: not XML, unsafe XML, not a CLML ``Legislation`` document, or no body.
    """
    root = parse_xml(data, source=source)
    if local_name(root) != "Legislation":
        raise CorpusFormatError(
            source, f"root element {local_name(root) or '?'} is not CLML (expected Legislation)"
        )
    if not _in_ns(root, CLML_NS):
        raise CorpusFormatError(source, f"the Legislation element is not in the CLML namespace {CLML_NS}")
    doc = _kid(root, "Primary")
    if doc is None:
        doc = _kid(root, "Secondary")
    if doc is None:
        raise CorpusFormatError(source, "no Primary or Secondary element: not a whole Act or instrument")
    body = _kid(doc, "Body")
    if body is None:
        raise CorpusFormatError(source, "no Body element (truncated or a fragment?)")

    reader = _ClmlReader(source)
    reader.container(body, None)
    if not any(p.kind == "article" for p in reader.provs.to_tuple()):
        raise CorpusFormatError(source, "no sections or regulations (P1) found in the Body")
    schedules = _kid(doc, "Schedules")
    if schedules is not None:
        reader.schedules(schedules)

    meta, kind_meta = _meta(root)
    identifier = _identifier(root, kind_meta)
    if identifier is None:
        raise CorpusFormatError(source, "cannot find the legislation's identifier (IdURI or ukm:Year/Number)")
    dc_title = (
        next((c for c in meta if _in_ns(c, DC_NS) and local_name(c) == "title"), None)
        if meta is not None
        else None
    )
    prelims = _kid(doc, "PrimaryPrelims" if local_name(doc) == "Primary" else "SecondaryPrelims")
    title = _text(dc_title) or (_text(_kid(prelims, "Title")) if prelims is not None else "") or identifier
    primary = local_name(doc) == "Primary"
    made = _ukm(kind_meta, "EnactmentDate" if primary else "Made")
    in_force = _ukm(kind_meta, "ComingIntoForce", "DateTime")
    modified = (
        next((c for c in meta if _in_ns(c, DC_NS) and local_name(c) == "modified"), None)
        if meta is not None
        else None
    )
    main_type = _ukm(kind_meta, "DocumentClassification", "DocumentMainType")
    metadata = {"legislation_id": identifier}
    if main_type is not None and main_type.get("Value"):
        metadata["document_main_type"] = main_type.get("Value", "")
    status = _ukm(kind_meta, "DocumentClassification", "DocumentStatus")
    if status is not None and status.get("Value"):
        metadata["document_status"] = status.get("Value", "")
    return Law(
        identifier=identifier,
        short_name=identifier.replace("/", "-"),
        title=title,
        jurisdiction="UK",
        law_type="act" if primary else "statutory-instrument",
        provisions=reader.provs.to_tuple(),
        date_adopted=parse_iso_date(made.get("Date")) if made is not None else None,
        date_in_force=parse_iso_date(in_force.get("Date")) if in_force is not None else None,
        version_date=parse_iso_date(_text(modified)) if modified is not None else None,
        source=source,
        source_format="clml",
        checksum=sha256_hex(data),
        metadata=metadata,
    )
