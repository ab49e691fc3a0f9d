"""Importer for EU acts as JSON (EUR-Lex consolidated texts collected by the EU_compliance_MCP project).

Shape: ``{"id", "full_name", "celex_id", "effective_date", "eur_lex_url", "articles": [{"number", "title",
"text"}], "recitals": [{"recital_number", "text"}], "definitions"?: [...]}``.

The texts are EUR-Lex consolidated versions and carry consolidation markers: ``▼B`` (basic act), ``▼M2``
(amendment 2), ``►M1 … ◄`` (inline amendment), ``▲``, ``—————`` (deleted text) and footnote numbers on lines of
their own. They are stripped. Article texts are then split into numbered paragraphs (``1.``, ``1a.``) and points
(``(a)``, ``(1)``, ``(i)``, ``—``) when that structure is recognisable; otherwise the article keeps its text whole.

The collection gives the act's last article everything that follows it in the Official Journal: the final formula
(``Done at Strasbourg, 14 December 2022.``), the signatures, the footnotes (``(8) Regulation (EU) 2016/679 …``)
and the annexes. The article ends at the final formula; signatures and footnotes are dropped; each ``ANNEX I``
… becomes an ``annex`` provision (``annex:I``) with its heading as title.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from compliance.errors import CorpusFormatError
from compliance.rules.building import ProvisionList, normalise_space, parse_iso_date, sha256_hex
from compliance.rules.corpus import Law

__all__ = ["parse_eu_json", "split_final_part", "strip_consolidation_markers"]

_MARKERS = re.compile(r"[▼►]\s?(?:[A-Z]\d*|C\d+|A\d+)?|[◄▲]")
_DELETED = re.compile(r"^\s*[—–-]{3,}\s*$", re.M)
_FOOTNOTE = re.compile(r"\(\s*\n\s*\d+\s*\n\s*\)")  # "(\n\n8\n\n)": a footnote call on its own lines
_BLANK_SPLIT = re.compile(r"\n\s*\n")
_PARA_ALONE = re.compile(r"^(\d+[a-z]?)\.$")
_PARA_INLINE = re.compile(r"^(\d+[a-z]?)\.[\s\u00a0]+(?=\S)")
_POINT_ALONE = re.compile(r"^\(([a-z]{1,2}|\d+[a-z]?|[ivxlc]+)\)$")
_POINT_INLINE = re.compile(r"^\(([a-z]{1,2}|\d+[a-z]?|[ivxlc]+)\)[\s\u00a0]+(?=\S)")
_DASH = {"—", "–", "-", "•"}
_ROMAN = re.compile(r"^[ivxlc]+$")
_REQUIRED = ("celex_id", "articles")
_LAW_TYPES = {"R": "regulation", "L": "directive", "D": "decision"}
#: "Done at Brussels, 27 April 2016." on a line of its own: the end of the enacting terms
_FINAL_FORMULA = re.compile(r"^[ \t\u00a0]*Done at [^\n]{2,80}?\d{4}\.?[ \t\u00a0]*$", re.M)
#: the first footnote, "(1) OJ C 233, 16.6.2022, p. 22." (the call may stand on lines of its own)
_FIRST_FOOTNOTE = re.compile(r"^\(\s*1\s*\)[\s\u00a0]*OJ[\s\u00a0]", re.M)
#: web-page script the collection scraped with the text ("/////$(document).ready(…)")
_PAGE_SCRIPT = re.compile(r"^/{5,}", re.M)
#: "ANNEX I", "ANNEX\u00a0XII", "ANNEX" on a line of its own, after the final formula
_ANNEX_HEAD = re.compile(r"^[ \t]*ANNEX(?:[ \t\u00a0]+([IVXLC]+|\d+))?[ \t\u00a0]*$", re.M)


def strip_consolidation_markers(text: str) -> str:
    """Remove EUR-Lex consolidation markers and footnote calls; normalise non-breaking spaces."""
    text = text.replace("\u00a0", " ")
    text = _FOOTNOTE.sub("", text)
    text = _MARKERS.sub("", text)
    text = _DELETED.sub("", text)
    return text


@dataclass
class _Block:
    kind: str  # "para", "point", "text"
    label: str | None
    text: str
    children: list[_Block] = field(default_factory=list)
    point_class: str = ""


def _blocks(text: str) -> list[tuple[str, str | None, str]]:
    """Split cleaned text into (kind, label, text) with labels joined to the block they introduce."""
    raw = [normalise_space(b) for b in _BLANK_SPLIT.split(text)]
    raw = [b for b in raw if b]
    out: list[tuple[str, str | None, str]] = []
    pending: tuple[str, str | None] | None = None
    for block in raw:
        if pending is None:
            if m := _PARA_ALONE.match(block):
                pending = ("para", m.group(1))
                continue
            if m := _POINT_ALONE.match(block):
                pending = ("point", m.group(1))
                continue
            if block in _DASH:
                pending = ("point", None)
                continue
            if m := _PARA_INLINE.match(block):
                out.append(("para", m.group(1), block[m.end() :]))
                continue
            if m := _POINT_INLINE.match(block):
                out.append(("point", m.group(1), block[m.end() :]))
                continue
            out.append(("text", None, block))
        else:
            kind, label = pending
            pending = None
            out.append((kind, label, block))
    if pending is not None:  # a dangling label: keep it as text rather than lose it
        out.append(("text", None, pending[1] or "—"))
    return out


def _point_class(label: str | None, open_points: list[_Block]) -> str:
    """Class of a point label: "dash", "arabic", "alpha" or "roman" ("(i)" after "(h)" is the letter i)."""
    if label is None:
        return "dash"
    if label[0].isdigit():
        return "arabic"
    if _ROMAN.match(label):
        alpha = next((b for b in reversed(open_points) if b.point_class == "alpha"), None)
        if alpha is not None and alpha.label and len(label) == 1 and ord(label) == ord(alpha.label[-1]) + 1:
            return "alpha"
        return "roman"
    return "alpha"


def _para_numbers_plausible(numbers: list[str]) -> bool:
    """Paragraph labels must start at 1 and never go backwards (1, 2, 2a, 3 …)."""
    if not numbers or not numbers[0].startswith("1") or (len(numbers[0]) > 1 and numbers[0][1].isdigit()):
        return False
    last = 0
    for label in numbers:
        value = int(re.match(r"\d+", label).group())  # type: ignore[union-attr]
        if value < last:
            return False
        last = value
    return True


def _structure(text: str) -> tuple[str, list[_Block]]:
    """(lead text, paragraphs-or-points). Paragraph blocks carry their points as children."""
    blocks = _blocks(text)
    para_labels = [label for kind, label, _ in blocks if kind == "para" and label]
    first_para = next((i for i, (kind, _, _) in enumerate(blocks) if kind == "para"), None)
    # "Member States shall ensure …:" followed by "1." items: a numbered list, not numbered paragraphs
    has_lead = first_para is not None and any(kind == "text" for kind, _, _ in blocks[:first_para])
    use_paras = _para_numbers_plausible(para_labels) and not has_lead
    lead: list[str] = []
    top: list[_Block] = []
    current_para: _Block | None = None
    stack: list[_Block] = []  # open points, outermost first
    for kind, label, body in blocks:
        if kind == "para" and not use_paras:
            kind, body = "text", f"{label}. {body}"
        if kind == "para":
            current_para = _Block("para", label, body)
            top.append(current_para)
            stack = []
            continue
        if kind == "point":
            cls = _point_class(label, stack)
            block = _Block("point", label, body, point_class=cls)
            # close points until one of the same class is found at that level, else nest
            level = next((i for i, open_ in enumerate(stack) if open_.point_class == cls), None)
            if level is not None:
                stack = stack[:level]
            parent_list = stack[-1].children if stack else (current_para.children if current_para else top)
            parent_list.append(block)
            stack.append(block)
            continue
        # plain text: a subparagraph of the current paragraph (or the article's lead text)
        stack = []
        if current_para is not None:
            current_para.children.append(_Block("text", None, body))
        elif top:
            top.append(_Block("text", None, body))
        else:
            lead.append(body)
    return "\n".join(lead), top


def _render(block: _Block, *, with_label: bool) -> str:
    """Text of a block with its descendants (points as '(a) …' lines)."""
    parts: list[str] = []
    own = block.text
    if with_label and block.kind == "point":
        own = f"({block.label}) {own}" if block.label else f"— {own}"
    parts.append(own)
    for child in block.children:
        parts.append(_render(child, with_label=True))
    return "\n".join(p for p in parts if p)


class _Builder:
    def __init__(self, provs: ProvisionList) -> None:
        self.provs = provs

    def add_points(self, blocks: list[_Block], parent_key: str) -> None:
        dash = 0
        for block in blocks:
            if block.kind != "point":
                continue
            if block.label:
                own = f"pt:{block.label}"
            else:
                dash += 1
                own = f"pt:dash-{dash}"
            key = self.provs.unique_key(f"{parent_key}/{own}")
            self.provs.add("point", key, block.label, block.text, parent_key=parent_key)
            self.add_points(block.children, key)


def _article_title(title: str, text: str) -> tuple[str, str]:
    """Fix titles lost to markers: title '►M2' with text 'Security of processing ◄ …'."""
    clean_title = normalise_space(strip_consolidation_markers(title))
    if not clean_title and "◄" in text[:300]:
        head, rest = text.split("◄", 1)
        return normalise_space(strip_consolidation_markers(head)), rest
    if not clean_title:  # no title given: a heading-like first line is the title
        cleaned = strip_consolidation_markers(text).strip()
        first, sep, rest = cleaned.partition("\n")
        first = normalise_space(first)
        heading_like = (
            first and len(first) < 300 and first[-1] not in ".:;,—" and first[0] not in "(0123456789"
        )
        if sep and heading_like and rest.lstrip(" ").startswith("\n"):  # a line of its own
            return first, rest
    return clean_title, text


def split_final_part(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """(the article's own text, annexes as (number, title, text)) for an article text that runs past the act's
    enacting terms (final formula, footnotes, scraped page script); other text comes back unchanged."""
    ends = [m.start() for rx in (_FINAL_FORMULA, _FIRST_FOOTNOTE, _PAGE_SCRIPT) if (m := rx.search(text))]
    if not ends:
        return text, []
    own_end = min(ends)
    tail = text[own_end:]
    script = _PAGE_SCRIPT.search(tail)
    tail = tail[: script.start()] if script else tail
    heads = list(_ANNEX_HEAD.finditer(tail))
    annexes: list[tuple[str, str, str]] = []
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(tail)
        body = strip_consolidation_markers(tail[head.end() : end]).strip()
        first, _, rest = body.partition("\n")
        first = normalise_space(first)
        titled = bool(first) and first.upper() == first and first[0].isalpha() and len(first) < 200
        annexes.append((head.group(1) or str(i + 1), first if titled else "", rest if titled else body))
    return text[:own_end], annexes


def _require(data: object, source: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise CorpusFormatError(source, f"expected a JSON object at the top level, got {type(data).__name__}")
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise CorpusFormatError(source, f"not an EU law JSON file: missing key(s) {', '.join(missing)}")
    if not isinstance(data["articles"], list) or not data["articles"]:
        raise CorpusFormatError(source, "'articles' must be a non-empty list")
    return data


def parse_eu_json(data: bytes, *, source: str) -> Law:
    """Parse an EU act in the EU_compliance_MCP JSON format into a :class:`Law`.

    Raises:
        CorpusFormatError: not JSON, not an object, required keys missing, malformed articles.
    """
    if not data or not data.strip():
        raise CorpusFormatError(source, "the file is empty")
    try:
        doc = _require(json.loads(data.decode("utf-8-sig")), source)
    except UnicodeDecodeError as e:
        raise CorpusFormatError(source, f"not UTF-8 text: {e}") from e
    except json.JSONDecodeError as e:
        raise CorpusFormatError(source, f"not valid JSON (truncated?): {e}") from e

    provs = ProvisionList(source)
    builder = _Builder(provs)
    seen_recitals: dict[str, str] = {}
    for i, rec in enumerate(doc.get("recitals") or [], start=1):
        if not isinstance(rec, dict) or "text" not in rec:
            raise CorpusFormatError(source, f"recital #{i}: expected an object with 'text'")
        number = str(rec.get("recital_number") or rec.get("number") or i)
        text = normalise_space(strip_consolidation_markers(str(rec["text"])))
        if not text or seen_recitals.get(number) == text:  # the collection repeats its last recital
            continue
        seen_recitals[number] = text
        provs.add("recital", provs.unique_key(f"rec:{number}"), number, text)

    annexes: list[tuple[str, str, str]] = []
    for i, art in enumerate(doc["articles"], start=1):
        if not isinstance(art, dict) or "text" not in art:
            raise CorpusFormatError(
                source, f"article #{i}: expected an object with 'number', 'title', 'text'"
            )
        number = normalise_space(str(art.get("number") or i))
        title, raw_text = _article_title(str(art.get("title") or ""), str(art["text"]))
        raw_text, found = split_final_part(raw_text)
        annexes.extend(found)
        lead, blocks = _structure(strip_consolidation_markers(raw_text))
        key = provs.unique_key(f"art:{number}")
        has_paras = any(b.kind == "para" for b in blocks)
        if has_paras:
            stray = "\n".join(
                [lead, *(_render(b, with_label=False) for b in blocks if b.kind == "text")]
            ).strip()
            provs.add("article", key, number, stray, title=title)
            for block in blocks:
                if block.kind != "para":
                    continue
                pkey = provs.unique_key(f"{key}/par:{block.label}")
                provs.add("paragraph", pkey, block.label, _render(block, with_label=False), parent_key=key)
                builder.add_points(block.children, pkey)
        else:
            whole = "\n".join([lead, *(_render(b, with_label=True) for b in blocks)]).strip()
            provs.add("article", key, number, whole, title=title)
            builder.add_points(blocks, key)
    for number, title, text in annexes:
        body = "\n".join(normalise_space(line) for line in _BLANK_SPLIT.split(text) if line.strip())
        if body:
            provs.add("annex", provs.unique_key(f"annex:{number}"), number, body, title=title or None)

    celex_raw = normalise_space(str(doc["celex_id"]))
    celex = _act_celex(celex_raw)
    law_type = _LAW_TYPES.get(celex[5:6], "act") if len(celex) >= 6 else "act"
    effective = parse_iso_date(str(doc.get("effective_date") or ""))
    metadata = {"celex": celex, "consolidated_celex": celex_raw}
    for key_in, key_out in (
        ("id", "source_id"),
        ("eur_lex_url", "eur_lex_url"),
        ("effective_date", "effective_date"),
    ):
        if doc.get(key_in):
            metadata[key_out] = str(doc[key_in])
    return Law(
        identifier=celex,
        short_name=re.sub(r"[^a-z0-9_-]+", "-", str(doc.get("id") or celex).lower()).strip("-")[:64] or "law",
        title=normalise_space(str(doc.get("full_name") or celex)),
        jurisdiction="EU",
        law_type=law_type,
        provisions=provs.to_tuple(),
        date_in_force=effective,
        version_date=_consolidation_date(celex_raw),
        source=source,
        source_format="eu-json",
        checksum=sha256_hex(data),
        metadata=metadata,
    )


def _act_celex(celex: str) -> str:
    """``02002L0058-20091219`` (consolidated version) → ``32002L0058`` (the act); others unchanged."""
    m = re.match(r"^0(\d{4}[A-Z]\d{4})-\d{8}$", celex)
    return f"3{m.group(1)}" if m else celex


def _consolidation_date(celex: str) -> date | None:
    m = re.match(r"^0\d{4}[A-Z]\d{4}-(\d{8})$", celex)
    return parse_iso_date(m.group(1)) if m else None
