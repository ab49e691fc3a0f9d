"""Cross-references between the articles of one act, read from its text.

``Article 6(1)(f)``, ``Articles 13 and 14``, ``Articles 15 to 22`` and ``Article 9(2)`` refer to articles of the
act itself; ``Article 16 of Directive 95/46/EC``, ``Article 8 of the Charter`` or ``Article 290 TFEU`` do not and
are skipped. The result feeds the article-applicability prior of the GDPR classifier
(:mod:`compliance.models.law_prior`) and is useful wherever a provision's neighbours matter.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from compliance.rules.corpus import Law

__all__ = ["article_references", "citation_counts", "foreign_reference_share", "provision_label"]

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


def citation_counts(law: Law) -> Counter[int]:
    """How many *other* articles of ``law`` refer to each article (the in-degree of the citation graph)."""
    articles = {int(a.number): a for a in law.articles if a.number and a.number.isdigit()}
    counts: Counter[int] = Counter()
    for number, art in articles.items():
        for ref in article_references(law.text_of(art.key), articles):
            if ref != number:
                counts[ref] += 1
    return counts


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
