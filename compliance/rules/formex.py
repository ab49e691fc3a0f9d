"""Importer for Formex 4, the XML format of the EU Publications Office (Official Journal and consolidated acts).

Formex elements used (schema: https://op.europa.eu/en/web/eu-vocabularies/formex):

* root ``ACT`` (an act as published in the Official Journal) or ``CONS.ACT`` (a consolidated version);
  ``DOC`` (the ``.doc.xml`` description of a publication) and ``CORR`` (a corrigendum) are refused;
* ``PREAMBLE/GR.CONSID/CONSID`` → recitals (``NP/NO.P`` holds "(75)");
* ``ENACTING.TERMS`` → nested ``DIVISION`` (chapter, section, title, part: ``TITLE/TI`` "CHAPTER IV", ``TITLE/STI``
  its heading) and ``ARTICLE`` (``TI.ART`` "Article 32", ``STI.ART`` the article title);
* ``PARAG`` (``NO.PARAG`` "1.") → paragraphs; ``ALINEA`` subparagraphs; ``LIST/ITEM/NP`` (``NO.P`` "(a)", ``TXT``)
  → points, nested lists → nested points;
* inline: ``HT`` (highlighting), ``DATE``, ``QUOT.START``/``QUOT.END`` (quotation marks, ``CODE`` is the Unicode
  code point in hex), ``NOTE`` (footnotes: left out of the text), processing instructions (``<?PAGE?>``: ignored).

Texts: a paragraph's text includes its points' texts, a point's text is its own wording without its nested
sub-points (those are child provisions). Blocks (subparagraphs, points) are separated by line breaks.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import TYPE_CHECKING

from compliance.errors import CorpusFormatError
from compliance.rules.building import (
    ProvisionList,
    normalise_lines,
    normalise_space,
    parse_iso_date,
    sha256_hex,
)
from compliance.rules.corpus import Law, ProvisionKind
from compliance.xml_safety import local_name, parse_xml

if TYPE_CHECKING:
    from lxml import etree

__all__ = ["parse_formex"]

_BREAK = "\x00"  # block boundary marker while rendering
_BLOCK = {
    "P", "ALINEA", "ITEM", "LIST", "PARAG", "CONSID", "NP", "QUOT.S", "ROW", "TBL", "GR.SEQ", "TI", "STI",
    "TITLE", "SUBPARAG", "VISA", "FORMULA", "GR.NOTES",
}  # fmt: skip
_SPACED = {"NO.P", "NO.PARAG", "CELL", "NO.SEQ"}
_SKIPPED = {"NOTE"}
_ACT_ROOTS = {"ACT", "CONS.ACT"}
_REFUSED_ROOTS = {
    "DOC": "this is a Formex publication description (.doc.xml), not an act; import the act file it names",
    "CORR": "this is a corrigendum, not an act; import the act (or its consolidated version) instead",
    "CONS.DOC": "this is a fragment of a consolidated act; import the whole CONS.ACT file",
}
_DIVISION_KINDS: dict[str, tuple[ProvisionKind, str]] = {
    "chapter": ("chapter", "chp"),
    "section": ("section", "sec"),
    "subsection": ("section", "ssec"),
    "title": ("part", "tit"),
    "part": ("part", "prt"),
}
_LAW_TYPES = {"REG": "regulation", "DIR": "directive", "DEC": "decision", "REC": "recommendation"}
_CELEX_LETTER = {"regulation": "R", "directive": "L", "decision": "D", "recommendation": "H"}
_ORDINAL_DAYS = {
    "first": 1, "second": 2, "third": 3, "fifth": 5, "seventh": 7, "tenth": 10, "fifteenth": 15,
    "twentieth": 20, "thirtieth": 30, "sixtieth": 60,
}  # fmt: skip
_IN_FORCE_RELATIVE = re.compile(
    r"enter into force on the (\w+) day following (?:that of )?its publication", re.I
)


# -- text rendering --------------------------------------------------------------------------------------------
def _render_into(el: etree._Element, out: list[str], skip: set[etree._Element]) -> None:
    name = local_name(el)
    if not name:  # comment or processing instruction: no text of its own
        return
    if name in _SKIPPED or el in skip:
        return
    if name in ("QUOT.START", "QUOT.END"):
        code = el.get("CODE")
        try:
            out.append(chr(int(code, 16)) if code else ("‘" if name == "QUOT.START" else "’"))
        except ValueError:
            out.append("‘" if name == "QUOT.START" else "’")
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
    if name in _SPACED:
        out.append(" ")
    if block:
        out.append(_BREAK)


def render(el: etree._Element, *, skip: set[etree._Element] | None = None) -> str:
    """The text of ``el``: inline markup flattened, footnotes dropped, one line per block."""
    out: list[str] = []
    _render_into(el, out, skip or set())
    raw = "".join(out)
    raw = re.sub(r"\s+", " ", raw).replace(_BREAK, "\n")
    return normalise_lines(raw)


def _child(el: etree._Element, name: str) -> etree._Element | None:
    for c in el:
        if local_name(c) == name:
            return c
    return None


def _children(el: etree._Element, name: str) -> list[etree._Element]:
    return [c for c in el if local_name(c) == name]


def _descendants(el: etree._Element, name: str) -> list[etree._Element]:
    return [d for d in el.iter() if local_name(d) == name]


def _strip_number(label: str) -> str:
    """``"(a)"`` → ``"a"``, ``"1."`` → ``"1"``, ``"(75)"`` → ``"75"``."""
    return normalise_space(label).strip("()．. ").strip()


# -- structure -------------------------------------------------------------------------------------------------
class _FormexReader:
    def __init__(self, root: etree._Element, source: str) -> None:
        self.root = root
        self.source = source
        self.provs = ProvisionList(source)
        self.recitals = 0
        self.articles = 0

    # recitals
    def read_recitals(self) -> None:
        for preamble in _descendants(self.root, "PREAMBLE"):
            for consid in _descendants(preamble, "CONSID"):
                np = _child(consid, "NP")
                no = _child(np, "NO.P") if np is not None else None
                number = _strip_number(render(no)) if no is not None else ""
                self.recitals += 1
                number = number or str(self.recitals)
                text = render(consid, skip={no} if no is not None else None)
                key = self.provs.unique_key(f"rec:{number}")
                self.provs.add("recital", key, number, text)

    # enacting terms
    def read_enacting_terms(self) -> None:
        terms = _descendants(self.root, "ENACTING.TERMS")
        if not terms:
            raise CorpusFormatError(
                self.source, "no ENACTING.TERMS element: the act has no articles (truncated?)"
            )
        self._read_container(terms[0], parent_key=None)
        if not any(p.kind == "article" for p in self.provs.to_tuple()):
            raise CorpusFormatError(self.source, "no ARTICLE found in ENACTING.TERMS")

    def _read_container(self, el: etree._Element, parent_key: str | None) -> None:
        for child in el:
            name = local_name(child)
            if name == "DIVISION":
                self._read_division(child, parent_key)
            elif name == "ARTICLE":
                self._read_article(child, parent_key)

    def _read_division(self, div: etree._Element, parent_key: str | None) -> None:
        title_el = _child(div, "TITLE")
        ti = _child(title_el, "TI") if title_el is not None else None
        heading = normalise_space(render(ti)) if ti is not None else ""
        sti = _child(title_el, "STI") if title_el is not None else None
        subtitle = normalise_space(render(sti)) if sti is not None else ""
        words = heading.split(None, 1)
        kind_key = _DIVISION_KINDS.get(words[0].lower()) if words else None
        if kind_key is not None and len(words) == 2:
            kind, prefix = kind_key
            number = normalise_space(words[1])
        else:
            kind, prefix, number = "section", "div", str(len(self.provs) + 1)
            subtitle = subtitle or heading
        own = f"{prefix}:{number}"
        key = self.provs.unique_key(f"{parent_key}/{own}" if parent_key else own)
        self.provs.add(kind, key, number, "", title=subtitle, parent_key=parent_key)
        self._read_container(div, key)

    def _read_article(self, art: etree._Element, parent_key: str | None) -> None:
        ti = _child(art, "TI.ART")
        sti = _child(art, "STI.ART")
        label = normalise_space(render(ti)) if ti is not None else ""
        number = re.sub(r"^(article|art\.)\s*", "", label, flags=re.I).strip()
        if not number:
            ident = art.get("IDENTIFIER", "")
            number = ident.lstrip("0") or str(self.articles + 1)
        title = normalise_space(render(sti)) if sti is not None else None
        key = self.provs.unique_key(f"art:{number}")
        parags = _children(art, "PARAG")
        skip = {e for e in (ti, sti) if e is not None}
        if parags:
            stray = render(art, skip=skip | set(parags))
            self.provs.add("article", key, number, stray, title=title, parent_key=parent_key)
            for i, parag in enumerate(parags, start=1):
                self._read_paragraph(parag, key, i)
        else:
            self.provs.add("article", key, number, render(art, skip=skip), title=title, parent_key=parent_key)
            self._read_points(art, key)
        self.articles += 1

    def _read_paragraph(self, parag: etree._Element, article_key: str, position: int) -> None:
        no = _child(parag, "NO.PARAG")
        number = _strip_number(render(no)) if no is not None else str(position)
        key = self.provs.unique_key(f"{article_key}/par:{number}")
        text = render(parag, skip={no} if no is not None else None)
        self.provs.add("paragraph", key, number, text, parent_key=article_key)
        self._read_points(parag, key)

    def _read_points(self, container: etree._Element, parent_key: str) -> None:
        dash = 0
        for item in _top_items(container):
            np = _child(item, "NP")
            no = _child(np, "NO.P") if np is not None else None
            label = _strip_number(render(no)) if no is not None else ""
            if not label or label in {"—", "-", "–", "•"}:
                dash += 1
                number: str | None = None
                own = f"pt:dash-{dash}"
            else:
                number = label
                own = f"pt:{label}"
            key = self.provs.unique_key(f"{parent_key}/{own}")
            nested_lists = {d for d in item.iter() if local_name(d) == "LIST" and d is not item}
            skip = nested_lists | ({no} if no is not None else set())
            self.provs.add("point", key, number, render(item, skip=skip), parent_key=parent_key)
            for lst in _top_lists(item):
                self._read_points(lst, key)

    # annexes (consolidated acts carry them; OJ acts publish them in separate files)
    def read_annexes(self) -> None:
        for i, annex in enumerate(_descendants(self.root, "ANNEX"), start=1):
            ti = _child(annex, "TITLE")
            ti_ti = _child(ti, "TI") if ti is not None else None
            heading = normalise_space(render(ti_ti)) if ti_ti is not None else ""
            number = re.sub(r"^annex\s*", "", heading, flags=re.I).strip() or str(i)
            sti = _child(ti, "STI") if ti is not None else None
            title = normalise_space(render(sti)) if sti is not None else None
            text = render(annex, skip={ti} if ti is not None else None)
            key = self.provs.unique_key(f"anx:{number}")
            self.provs.add("annex", key, number, text, title=title)


def _top_items(container: etree._Element) -> list[etree._Element]:
    """ITEMs under ``container`` that are not inside another ITEM below ``container``."""
    found: list[etree._Element] = []

    def walk(el: etree._Element) -> None:
        for c in el:
            name = local_name(c)
            if name == "ITEM":
                found.append(c)
            elif name and name not in _SKIPPED:
                walk(c)

    walk(container)
    return found


def _top_lists(item: etree._Element) -> list[etree._Element]:
    """The LISTs nested in ``item`` (not inside a deeper ITEM), to read sub-points from."""
    found: list[etree._Element] = []

    def walk(el: etree._Element) -> None:
        for c in el:
            name = local_name(c)
            if name == "LIST":
                found.append(c)
            elif name and name != "ITEM" and name not in _SKIPPED:
                walk(c)

    walk(item)
    return found


# -- metadata --------------------------------------------------------------------------------------------------
def _first(root: etree._Element, path: str) -> etree._Element | None:
    found = root.xpath(path)
    return found[0] if isinstance(found, list) and found else None  # type: ignore[return-value]


def _title(root: etree._Element) -> str:
    ti = _first(root, "./CONS.DOC/FAM.COMP/BIB.DATA/TITLE/TI") if local_name(root) == "CONS.ACT" else None
    if ti is None:
        ti = _first(root, "./TITLE/TI")
    if ti is None:
        return ""
    parts = [normalise_space(render(p)) for p in _children(ti, "P")] or [normalise_space(render(ti))]
    parts = [p for p in parts if p and p.lower() != "(text with eea relevance)"]
    return normalise_space(" ".join(parts))


def _law_type(root: etree._Element, title: str) -> str:
    for path in ("./INFO.CONSLEG/@LEG.VAL", ".//FAM.COMP/@LEG.VAL"):
        found = root.xpath(path)
        if isinstance(found, list) and found and str(found[0]) in _LAW_TYPES:
            return _LAW_TYPES[str(found[0])]
    first = title.split(None, 1)[0].lower() if title else ""
    for word, law_type in (
        ("regulation", "regulation"),
        ("directive", "directive"),
        ("decision", "decision"),
    ):
        if first.startswith(word):
            return law_type
    return "act"


def _celex(root: etree._Element, law_type: str, source: str) -> str:
    celex = _first(root, ".//NO.CELEX")
    if celex is not None and normalise_space(render(celex)):
        return normalise_space(render(celex))
    no_doc = _first(root, ".//BIB.INSTANCE/NO.DOC")
    if no_doc is None:
        no_doc = _first(root, ".//NO.DOC")
    letter = _CELEX_LETTER.get(law_type)
    if no_doc is not None and letter:
        number = _child(no_doc, "NO.CURRENT")
        year = _child(no_doc, "YEAR")
        if number is not None and year is not None:
            num = normalise_space(render(number))
            yr = normalise_space(render(year))
            if num.isdigit() and yr.isdigit():
                return f"3{yr}{letter}{int(num):04d}"
    raise CorpusFormatError(source, "cannot find the act's CELEX number (no NO.CELEX and no NO.DOC)")


def _iso(el: etree._Element | None) -> date | None:
    return parse_iso_date(el.get("ISO")) if el is not None else None


def _dates(root: etree._Element) -> dict[str, date]:
    out: dict[str, date] = {}
    if local_name(root) == "CONS.ACT":
        adopted = _iso(_first(root, "./CONS.DOC/FAM.COMP/BIB.DATA/DATE"))
        published = _iso(_first(root, "./CONS.DOC/FAM.COMP/BIB.DATA/BIB.INSTANCE.CONS/DATE"))
        info = _first(root, "./INFO.CONSLEG")
        version = parse_iso_date(info.get("CONSLEG.DATE")) if info is not None else None
    else:
        adopted = _iso(_first(root, "./TITLE//DATE")) or _iso(_first(root, "./BIB.INSTANCE/DATE"))
        published = None
        version = adopted
    if adopted:
        out["adopted"] = adopted
    if published:
        out["published"] = published
    if version:
        out["version"] = version
    for article in reversed(_descendants(root, "ARTICLE")):  # the final provisions are at the end
        text = render(article)
        if "into force" not in text and "shall apply from" not in text:
            continue
        for parag in _children(article, "PARAG") or [article]:
            ptext = render(parag)
            dates = [d for d in (_iso(x) for x in _descendants(parag, "DATE")) if d]
            if "into force" in ptext and "in_force" not in out:
                rel = _IN_FORCE_RELATIVE.search(ptext)
                if rel and published and rel.group(1).lower() in _ORDINAL_DAYS:
                    out["in_force"] = published + timedelta(days=_ORDINAL_DAYS[rel.group(1).lower()])
                elif dates and "enter into force on" in ptext:
                    out["in_force"] = dates[0]
            if "shall apply from" in ptext and dates and "applicable" not in out:
                out["applicable"] = dates[0]
        break
    return out


def parse_formex(data: bytes, *, source: str) -> Law:
    """Parse a Formex 4 act (``ACT`` or ``CONS.ACT``) into a :class:`Law`.

    Args:
        data: The file's bytes.
        source: Path or URL it came from (stored on the law and used in error messages).

    Returns:
        The law with chapters/sections, articles, paragraphs, points, recitals (and annexes if present) in
        document order. ``short_name`` is the CELEX number in lower case until a law pack names it.

    Raises:
        CorpusFormatError: not XML, unsafe XML, not a Formex act, or no articles.
    """
    root = parse_xml(data, source=source)
    root_name = local_name(root)
    if root_name in _REFUSED_ROOTS:
        raise CorpusFormatError(source, f"root element {root_name}: {_REFUSED_ROOTS[root_name]}")
    if root_name not in _ACT_ROOTS:
        raise CorpusFormatError(
            source, f"root element {root_name or '?'} is not a Formex act (expected ACT or CONS.ACT)"
        )
    reader = _FormexReader(root, source)
    reader.read_recitals()
    reader.read_enacting_terms()
    reader.read_annexes()

    title = _title(root)
    law_type = _law_type(root, title)
    celex = _celex(root, law_type, source)
    dates = _dates(root)
    metadata = {"celex": celex, "formex_root": root_name}
    if "applicable" in dates:
        metadata["date_applicable"] = dates["applicable"].isoformat()
    if "published" in dates:
        metadata["date_published"] = dates["published"].isoformat()
    return Law(
        identifier=celex,
        short_name=celex.lower(),
        title=title or celex,
        jurisdiction="EU",
        law_type=law_type,
        provisions=reader.provs.to_tuple(),
        date_adopted=dates.get("adopted"),
        date_in_force=dates.get("in_force"),
        version_date=dates.get("version"),
        source=source,
        source_format="formex4",
        checksum=sha256_hex(data),
        metadata=metadata,
    )
