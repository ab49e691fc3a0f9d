"""Cross-references between the articles of one act, read from its text.

``Article 6(1)(f)``, ``Articles 13 and 14``, ``Articles 15 to 22`` and ``Article 9(2)`` refer to articles of the
act itself; ``Article 16 of Directive 95/46/EC``, ``Article 8 of the Charter`` or ``Article 290 TFEU`` do not and
are skipped. The result feeds the article-applicability prior of the GDPR classifier
(:mod:`compliance.models.law_prior`) and is useful wherever a provision's neighbours matter.

A policy cites the act by name instead: ``Art. 30 GDPR``, ``Article 6(1)(f) of the General Data Protection
Regulation``, ``Articles 15 to 22 UK GDPR``, ``Art. 6 para. 1 lit. f GDPR``, ``GDPR Article 17``, ``Article 28 of
Regulation (EU) 2016/679``. :func:`cited_provisions` reads those citations for the names :func:`act_names` takes
from the act itself (its short title, the title's initials, its number); a reference without the act's name
(``Article 5 of this Agreement``, ``Article 21 NIS2``) is not a citation of it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from compliance.rules.addressees import obliges_public_bodies_only
from compliance.rules.corpus import Law

__all__ = [
    "Citation",
    "act_names",
    "article_references",
    "citation_counts",
    "cited_provisions",
    "foreign_reference_share",
    "provision_label",
]

# "Article 6(1)(a)" / "Articles 13, 14 and 22" / "Articles 15 to 22" / "Article 58(2)(a) to (h)"
_NUM = r"\d+(?:\(\d+[a-z]?\))*(?:\([a-z]{1,4}\))*"
_SEP = r"(?:\s*,\s*|\s+and\s+|\s+or\s+|\s+to\s+|\s*-\s*)"
_REF = re.compile(rf"\bArticles?\s+(?P<list>{_NUM}(?:{_SEP}(?:{_NUM}|\([a-z0-9]{{1,4}}\)))*)")
_ITEM = re.compile(rf"(?P<sep>{_SEP})?(?P<item>{_NUM}|\([a-z0-9]{{1,4}}\))")
_LEADING_INT = re.compile(r"^\d+")
# what follows a reference to another instrument: "Article 16 of Directive …", "Article 8 of the Charter",
# "Article 290 TFEU"; "of this Regulation/Directive" stays internal.
_FOREIGN = re.compile(
    r"^\s*(?:of\s+(?!this\b)(?:the\s+)?(?:Directive|Regulation|Decision|Council|Treaty|Charter|Protocol|Convention|"
    r"Framework|Commission|Union|European)|TFEU\b|TEU\b)",
    re.IGNORECASE,
)


def article_references(text: str, valid: Iterable[int] | None = None) -> set[int]:
    """Article numbers of the same act referred to in ``text`` (ranges expanded, sub-divisions dropped).

    Args:
        text: a provision's text.
        valid: keep only these article numbers (e.g. the act's articles); None keeps every number.
    """
    keep = set(valid) if valid is not None else None
    found: set[int] = set()
    for m in _REF.finditer(text):
        if _FOREIGN.match(text[m.end() : m.end() + 60]):
            continue
        previous: int | None = None
        for item in _ITEM.finditer(m.group("list")):
            head = _LEADING_INT.match(item.group("item"))
            if head is None:  # "(h)" in "58(2)(a) to (h)": a point range inside the previous article
                continue
            number = int(head.group(0))
            sep = (item.group("sep") or "").strip()
            if sep in {"to", "-"} and previous is not None and previous < number <= previous + 99:
                found.update(range(previous + 1, number + 1))
            else:
                found.add(number)
            previous = number
    return found if keep is None else found & keep


def citation_counts(law: Law, *, regulated_only: bool = False) -> Counter[int]:
    """How many *other* articles of ``law`` refer to each article (the in-degree of the citation graph).

    ``regulated_only``: count a reference only where it stands in a provision that does not oblige public bodies
    only (:func:`compliance.rules.addressees.obliges_public_bodies_only`; each point on its own, read with the words
    that introduce its list, and the rest of a paragraph apart). The GDPR's Art. 63 (consistency mechanism) is
    referred to by twelve articles, nine of them in what the supervisory authorities and the Board do; Art. 28
    (processors) by four, three of them in the authorities' tasks and powers and the Board's opinions on the
    standard clauses of its paragraph 8. Read so, the in-degree says how often the law brings an article into what
    controllers and processors do.
    """
    articles = {int(a.number): a for a in law.articles if a.number and a.number.isdigit()}
    counts: Counter[int] = Counter()
    for number, art in articles.items():
        if regulated_only:
            refs: set[int] = set()
            for key, text in _smallest_provisions(law, art.key):
                if not obliges_public_bodies_only(law, key):
                    refs |= article_references(text, articles)
        else:
            refs = article_references(law.text_of(art.key), articles)
        for ref in refs:
            if ref != number:
                counts[ref] += 1
    return counts


def _smallest_provisions(law: Law, key: str) -> Iterator[tuple[str, str]]:
    """``(key, text)`` of the provisions under ``key`` that have none under them (points, paragraphs without
    points), and of what a provision says beside them (a list's lead-in, a sentence after it), under its own key."""
    provision = law.get(key)
    parts = [c for c in law.children(key) if c.kind in ("paragraph", "point")]
    if not parts:
        yield key, law.text_of(key)
        return
    rest = provision.text
    for part in parts:
        rest = rest.replace(part.text, " ") if part.text else rest
        yield from _smallest_provisions(law, part.key)
    if rest.strip():
        yield key, rest


# another act named by its number: "Regulation (EU) 2016/679", "Directive 2002/58/EC", "Regulation (EU) No 910/2014",
# "Directive (EU) 2016/1148", "Decision No 1313/2013/EU"
_ACT = re.compile(
    r"\b(?:Regulation|Directive|Decision)s?\s+(?:\((?:EU|EC|EEC|Euratom)\)\s*)?(?:No\.?\s*)?\d{1,4}/\d{1,4}(?:/(?:EU|EC|EEC))?",
)
_SENTENCE = re.compile(r"(?<=[.;:])\s+(?=[A-Z(])")


def foreign_reference_share(text: str, own: str | None = None) -> float:
    """Share of ``text``'s sentences that name another act by its number (``Regulation (EU) 2016/679``,
    ``Directive 2002/58/EC`` …); ``own`` is the act's own number (``2022/2555``), not counted.

    A recital of NIS2 that explains how the GDPR applies scores high; an article that states a duty and cites
    another act in one clause scores low.
    """
    sentences = [s for s in _SENTENCE.split(text) if s.strip()]
    if not sentences:
        return 0.0

    def foreign(sentence: str) -> bool:
        return any(own is None or own not in m.group(0) for m in _ACT.finditer(sentence))

    return sum(foreign(s) for s in sentences) / len(sentences)


@dataclass(frozen=True)
class Citation:
    """A provision of an act cited by name in a text.

    Attributes:
        article: the article number.
        key: the provision as specifically as the citation names it (``art:6/par:1/pt:f`` for ``Art. 6(1)(f)`` or
            ``Art. 6 para. 1 lit. f``; ``art:30`` for ``Art. 30``); it may name a subdivision the act does not have.
        text: the citation as written, the act's name included (``Art. 6(1)(f) GDPR``).
    """

    article: int
    key: str
    text: str


_TITLE_NUMBER = re.compile(
    r"\b(?:Regulation|Directive|Decision)\s+(?:\((?:EU|EC|EEC|Euratom)\)\s*)?(?:No\s*)?(\d{2,4}/\d{1,4})"
)
_PARENTHESISED = re.compile(r"\(([^()]{6,80})\)\s*$")


def act_names(law: Law) -> tuple[str, ...]:
    """The names a document cites ``law`` by: its short title (``General Data Protection Regulation``; the
    pack's, else the title's closing parenthesis), the short title's initials when it has three words or more
    (``GDPR``), and the act's number (``2016/679``, cited as ``Regulation (EU) 2016/679``)."""
    names: list[str] = []
    short = law.metadata.get("short_title") or ""
    if not short and (m := _PARENTHESISED.search(law.title)):
        short = m.group(1)
    if short:
        names.append(short.strip())
        words = [w for w in re.findall(r"[A-Za-z]+", short) if w[0].isupper()]
        if len(words) >= 3:
            names.append("".join(w[0] for w in words))
    if m := _TITLE_NUMBER.search(law.title):
        names.append(m.group(1))
    return tuple(dict.fromkeys(names))


# one cited article and its subdivisions: "6(1)(f)", "6 (1) (f)", "6 para. 1 lit. f", "6 paragraph 1 point (f)"
_SUBDIVISION = (
    r"(?:\s?\(\s?(?:\d{1,3}[a-z]?|[a-z]{1,5})\s?\)"
    r"|\s?[a-z]{1,4}\)"  # "Art. 5 (1) f) GDPR"
    r"|\s+(?:para(?:graph)?|par|sub-?para(?:graph)?|lit(?:era)?|letter|point|sentence|no)\.?\s*\(?[0-9a-z]{1,5}\)?(?![\w/]))"
)
# an item is an article with its subdivisions, or a sibling of the previous item's last subdivision: the "(b)" of
# "Art. 6(1)(a) and (b)", the "(8)" of "Art. 28(7) or (8)"
_CITED_ITEM = rf"(?:\d{{1,3}}{_SUBDIVISION}*(?![\w/])|\((?:\d{{1,3}}[a-z]?|[a-z]{{1,5}})\))"
_CITED_SEP = (
    r"(?:\s*,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+|\s*&\s*|\s+to\s+|\s*[-\u2013]\s*|\s+as\s+well\s+as\s+)"
)
_CITED_HEAD = r"\b(?:Articles?|Arts?\.?)\s*"
# "Art. 5(1)(f) and Art. 32": a list may repeat the word
_CITED_LIST = rf"{_CITED_ITEM}(?:{_CITED_SEP}(?:{_CITED_HEAD})?{_CITED_ITEM})*"
_PART = re.compile(
    r"\(\s?(?P<paren>\d{1,3}[a-z]?|[a-z]{1,5})\s?\)"
    r"|(?<![(\w])(?P<bare>[a-z]{1,4})\)"
    r"|(?P<word>para(?:graph)?|par|sub-?para(?:graph)?|lit(?:era)?|letter|point|sentence|no)\.?\s*\(?(?P<value>[0-9a-z]{1,5})\)?",
    re.IGNORECASE,
)
_CITED_ONE = re.compile(rf"(?P<sep>{_CITED_SEP})?(?:{_CITED_HEAD})?(?P<item>{_CITED_ITEM})", re.IGNORECASE)


def _name_pattern(name: str) -> str:
    if re.fullmatch(r"\d{2,4}/\d{1,4}", name):
        return rf"(?:Regulation|Directive|Decision)\s+(?:\((?:EU|EC|EEC|Euratom)\)\s*)?(?:No\.?\s*)?{re.escape(name)}(?!\d)"
    return r"\s+".join(re.escape(w) for w in name.split()) + r"(?![\w-])"


@lru_cache(maxsize=16)
def _citation_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    act = "(?:" + "|".join(_name_pattern(n) for n in names) + ")"
    qualifier = r"(?:(?:the\s+)?(?:EU\s+|UK\s+|European\s+)?)"
    after = rf"{_CITED_HEAD}(?P<after>{_CITED_LIST})\s*,?\s+(?:of\s+)?{qualifier}{act}"
    before = rf"\b{qualifier}{act}\s*,?\s*{_CITED_HEAD}(?P<before>{_CITED_LIST})"
    return re.compile(rf"{after}|{before}", re.IGNORECASE)


def _cited_key(article: int, subdivisions: str) -> str:
    """``art:N`` with the first numbered paragraph (``par:``) and the first lettered point (``pt:``) named."""
    paragraph = point = None
    for m in _PART.finditer(subdivisions):
        value = (m.group("paren") or m.group("bare") or m.group("value") or "").lower()
        word = (m.group("word") or "").lower()
        if word in {"sentence", "no"}:
            continue
        if (
            value[:1].isdigit()
            and paragraph is None
            and point is None
            and word not in {"lit", "litera", "letter"}
        ):
            paragraph = value
        elif value.isalpha() and point is None:
            point = value
    key = f"art:{article}"
    if paragraph:
        key += f"/par:{paragraph}"
    if point:
        key += f"/pt:{point}"
    return key


def _sibling_key(key: str, sibling: str) -> str:
    """The provision a sibling item names after ``key``: ``art:6/par:1/pt:a`` and ``(b)`` →
    ``art:6/par:1/pt:b``; ``art:28/par:7`` and ``(8)`` → ``art:28/par:8`` (a numbered sibling is a paragraph)."""
    value = sibling.strip("() ").lower()
    if value[:1].isdigit():
        return f"{key.split('/')[0]}/par:{value}"
    return f"{key.split('/pt:')[0]}/pt:{value}"


def cited_provisions(text: str, names: Sequence[str], valid: Iterable[int] | None = None) -> list[Citation]:
    """The provisions of the act named ``names`` (:func:`act_names`) that ``text`` cites, in the order cited, one
    per cited article or subdivision (a range of articles gives each article).

    Args:
        text: a paragraph of a policy, a control, a decision.
        names: the act's names; a reference counts only when one of them follows it (``Art. 30 GDPR``, ``Article
            28 of the UK GDPR``) or comes just before it (``GDPR Article 17``).
        valid: keep only these article numbers (e.g. the act's articles); None keeps every number.
    """
    low = text.lower()
    if not any(name.split()[0].lower() in low for name in names if name.strip()):
        return []  # no name of the act, no citation of it (most paragraphs: skips the pattern)
    keep = set(valid) if valid is not None else None
    out: list[Citation] = []
    for m in _citation_pattern(tuple(names)).finditer(text):
        listed = m.group("after") or m.group("before") or ""
        phrase = " ".join(m.group(0).split())
        previous: int | None = None
        for item in _CITED_ONE.finditer(listed):
            sep = (item.group("sep") or "").strip(" ,").lower()
            body = item.group("item")
            head = _LEADING_INT.match(body)
            if (
                head is None
            ):  # "(b)" in "Art. 6(1)(a) and (b)", "(8)" in "Art. 28(7) or (8)": the same article
                if previous is not None and out:
                    out.append(Citation(previous, _sibling_key(out[-1].key, body), phrase))
                continue
            number = int(head.group(0))
            if sep in {"to", "-", "\u2013"} and previous is not None and previous < number <= previous + 99:
                numbers = list(range(previous + 1, number + 1))
            else:
                numbers = [number]
            for n in numbers:
                out.append(Citation(n, _cited_key(n, body[head.end() :] if n == number else ""), phrase))
            previous = number
    seen: set[tuple[int, str]] = set()
    result = []
    for c in out:
        if (keep is None or c.article in keep) and (c.article, c.key) not in seen:
            seen.add((c.article, c.key))
            result.append(c)
    return result


def provision_label(key: str) -> str:
    """A provision key as a lawyer writes it: ``art:21/par:2/pt:j`` → ``Art. 21(2)(j)``, ``art:5`` → ``Art. 5``,
    ``rec:121`` → ``Recital 121``, an indent (``pt:dash-1``) as EU acts cite it: ``Art. 4(1a), first indent``;
    anything else is returned as is."""
    parts = key.split("/")
    head, _, number = parts[0].partition(":")
    if head == "rec" and len(parts) == 1:
        return f"Recital {number}"
    if head != "art":
        return key
    out = f"Art. {number}"
    for part in parts[1:]:
        kind, _, value = part.partition(":")
        if kind not in {"par", "pt"}:
            return key
        if kind == "pt" and value.startswith("dash-") and value[5:].isdigit():
            n = int(value[5:])
            out += f", {_ORDINALS[n - 1]} indent" if 1 <= n <= len(_ORDINALS) else f", indent {n}"
        else:
            out += f"({value})"
    return out


_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
