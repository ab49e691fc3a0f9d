"""Abbreviations a policy uses, read with the words they stand for (issue 13).

The GDPR never writes "DPIA", "DPO", "RoPA", "SCCs" or "TOMs", and policies and controls write little else: "A
DPIA is completed for high-risk processing" shares no word with Art. 35, and "DSARs are answered within one month"
none with Art. 12 or 15. The classifier's training text restates the law in a policy's words
(:mod:`compliance.models.restate`) and so teaches the encoder a few of them, but the lexical expert, the provision
picker and the encoder on an abbreviation it never saw read only what is written.

:func:`write_out` reads a text as a careful writer would have written it: the first use of each known abbreviation
followed by its words in brackets ("A DPIA (data protection impact assessment) is completed …"). It adds words and
removes none, and leaves an abbreviation alone where the text explains it ("Data Protection Officer (DPO)", "DPO
(data protection officer)") or says its words in full elsewhere. (Replacing the abbreviation by its words instead
was measured too and chosen against on the GDPRhub training halves: docs/classifier.md, *Abbreviations read with
their words*.) Two sources of abbreviations:

* :data:`ABBREVIATIONS`: the profession's abbreviations of the law's own terms and of the security measures it
  names, with the words they stand for (the law's where it has them). Only abbreviations with one reading in data
  protection are listed: "DPA" is a data protection authority in a decision and a data processing agreement in a
  policy, "SAR" a subject access request in a privacy policy and a suspicious activity report in an AML one.
* :func:`defined_abbreviations`: the abbreviations a document defines itself ("Data Subject Access Request
  (DSAR)", "DSAR (data subject access request)", a glossary's "DSAR: Data subject access request"), found the way
  Schwartz and Hearst (2003) find them: every letter of the short form appears, in order, in the long form, the
  first one at the start of a word. An organisation's own abbreviations, and the ambiguous ones it defines, are
  then read as it defines them in every paragraph of the document.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

__all__ = ["ABBREVIATIONS", "defined_abbreviations", "write_out", "written_out"]

#: abbreviation → the words it stands for (the law's where it has them); matched case-sensitively as a whole word
ABBREVIATIONS: dict[str, str] = {
    "DPO": "data protection officer",
    "DPOs": "data protection officers",
    "DPIA": "data protection impact assessment",
    "DPIAs": "data protection impact assessments",
    "PIA": "privacy impact assessment",
    "PIAs": "privacy impact assessments",
    "RoPA": "records of processing activities",
    "ROPA": "records of processing activities",
    "DSAR": "data subject access request",
    "DSARs": "data subject access requests",
    "SCC": "standard contractual clauses",
    "SCCs": "standard contractual clauses",
    "BCR": "binding corporate rules",
    "BCRs": "binding corporate rules",
    "TOMs": "technical and organisational measures",
    "LIA": "legitimate interests assessment",
    "LIAs": "legitimate interests assessments",
    "TIA": "transfer impact assessment",
    "TIAs": "transfer impact assessments",
    "MFA": "multi-factor authentication",
    "2FA": "two-factor authentication",
}

_NOT_WORD = r"[^A-Za-z0-9]"
#: a candidate short form: 2–10 characters of letters and digits (a plural "s" allowed), at least two capitals
_SHORT = r"(?=(?:[^A-Z]*[A-Z]){2})[A-Za-z0-9][A-Za-z0-9&-]{0,8}[A-Za-z0-9]"
#: "long form (SF)" and "SF (long form)"
_PAREN_SHORT = re.compile(rf"\(\s*({_SHORT})\s*\)")
_BRACKETED = re.compile(r"\(([^()]{3,120})\)")
#: the short form just before a bracket (in the 24 characters before it)
_SHORT_BEFORE = re.compile(rf"(?:^|(?<={_NOT_WORD}))({_SHORT})\s*$")
#: a glossary entry: "SF: long form", "SF – long form", "SF means a long form", "Term: SF; Meaning: long form"
_GLOSSARY = re.compile(
    rf"^\W{{0,3}}({_SHORT})\W{{0,3}}(?::|\s[–—-]|\s+(?:means|stands for|is short for))\s+(.{{3,120}}?)\s*(?:[.;]|$)"
)
_TABLE_TERM = re.compile(
    rf"^(?:term|abbreviation|acronym)s?:\s*({_SHORT});\s*[^:;]{{1,30}}:\s*([^;]{{3,120}})", re.I
)
_ARTICLE = re.compile(r"^(?:an?|the|any)\s+", re.IGNORECASE)


def _long_form(short: str, words: list[str]) -> str | None:
    """The shortest tail of ``words`` that ``short`` abbreviates (Schwartz & Hearst, 2003): the short form's
    letters and digits, right to left, each found further left in the tail, the first one at the start of a word;
    the tail is searched within the last ``min(n + 5, 2n)`` words (``n`` the short form's characters). None when
    there is none, or when the long form is no longer than the short one."""
    core = short[:-1] if short.endswith("s") and short[:-1].isupper() else short
    chars = [c.lower() for c in core if c.isalnum()]
    if len(chars) < 2 or not words:
        return None
    text = " ".join(words[-min(len(chars) + 5, 2 * len(chars)) :])
    low = text.lower()
    s = len(chars) - 1
    i = len(low) - 1
    while s >= 0:
        c = chars[s]
        # the first character of the short form must start a word of the long form
        while i >= 0 and (low[i] != c or (s == 0 and i > 0 and low[i - 1].isalnum())):
            i -= 1
        if i < 0:
            return None
        i -= 1
        s -= 1
    begin = low.rfind(" ", 0, i + 1) + 1
    long = text[begin:]
    if len(long) <= len(core) or (" " not in long and len(long) < len(core) + 3):
        return None
    # most letters of the short form start a word of the long form ("Security and System Logs" is no SIEM)
    initials = [w[0] for w in re.split(r"[\s/-]+", long.lower()) if w and w[0].isalnum()]
    if _common_subsequence(initials, chars) < max(2, len(chars) - 1):
        return None
    return long


def _common_subsequence(a: list[str], b: list[str]) -> int:
    """The length of the longest common subsequence of ``a`` and ``b``."""
    row = [0] * (len(b) + 1)
    for x in a:
        diagonal = 0
        for j, y in enumerate(b, start=1):
            diagonal, row[j] = row[j], diagonal + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


def _clean_long(long: str) -> str:
    """A long form as it is written out: without a leading article or quotes, in lower case but for the
    abbreviations inside it ("Data Subject Access Request" → "data subject access request")."""
    words = _ARTICLE.sub("", long.strip(" \"'“”‘’,")).split()
    return " ".join(w if len(w) > 1 and w.isupper() else w.lower() for w in words)


def _define(found: dict[str, str], short: str, long: str) -> None:
    """Record ``short`` → ``long`` (and its plural or singular: "SARs" → "subject access requests" also defines
    "SAR"), unless ``short`` is defined already or stands inside its own long form ("ISO 27001 (ISO)")."""
    long = _clean_long(long)
    if short.lower() in long.lower().split() or short in found:
        return
    found[short] = long
    if short[-1:] == "s" and short[:-1].isupper() and long.endswith("s"):
        found.setdefault(short[:-1], long[:-1])
    elif short.isupper() and not long.endswith("s"):
        found.setdefault(short + "s", _plural(long))


def _plural(long: str) -> str:
    """The plural of a long form's last word ("assessment" → "assessments", "policy" → "policies")."""
    if re.search(r"[^aeiou]y$", long):
        return long[:-1] + "ies"
    if re.search(r"(?:s|x|ch|sh)$", long):
        return long + "es"
    return long + "s"


def defined_abbreviations(texts: Iterable[str]) -> dict[str, str]:
    """The abbreviations ``texts`` (the paragraphs of one document) define, each with the words it stands for:
    "Data Subject Access Request (DSAR)", "DSAR (data subject access request)", a glossary's "DSAR: Data Subject
    Access Request" or "Term: DSAR; Meaning: …". A definition counts only where the short form's letters appear in
    the long form in order, the first at the start of a word (so "Article 28 (DPA)" defines nothing). The first
    definition of a short form wins."""
    found: dict[str, str] = {}
    for text in texts:
        for m in _PAREN_SHORT.finditer(text):
            short = m.group(1)
            words = re.findall(r"\S+", text[: m.start()])[-12:]
            words = [w.strip("\"'“”‘’,") for w in words]
            long = _long_form(short, [w for w in words if w])
            if long is not None:
                _define(found, short, long)
        for m in _BRACKETED.finditer(text):
            begin = max(0, m.start() - 24)
            before = _SHORT_BEFORE.search(text[begin : m.start()])
            if before is None or (
                before.start(1) == 0 and begin > 0
            ):  # a word cut by the window is no short form
                continue
            short, inside = before.group(1), m.group(1)
            words = [w for w in (x.strip("\"'“”‘’,") for x in inside.split()) if w]
            if words and _long_form(short, words) == " ".join(words):
                _define(found, short, inside)
        for pattern in (_GLOSSARY, _TABLE_TERM):
            g = pattern.match(text)
            if g:
                short, long = g.group(1), g.group(2)
                words = [w for w in (x.strip("\"'“”‘’,") for x in long.split()) if w][:12]
                # the long form starts the entry: its first words must be what the short form abbreviates
                for size in range(2, len(words) + 1):
                    if _long_form(short, words[:size]) == " ".join(words[:size]):
                        _define(found, short, " ".join(words[:size]))
                        break
    return found


def _explained(text: str, start: int, end: int) -> bool:
    """Whether the abbreviation at ``text[start:end]`` is explained where it stands: in brackets itself
    ("… Officer (DPO)"), or followed by brackets ("DPO (data protection officer)")."""
    before = text[:start].rstrip()
    after = text[end:].lstrip()
    return before.endswith("(") or after.startswith("(")


def written_out(text: str, abbreviations: Mapping[str, str] | None = None) -> tuple[str, dict[str, str]]:
    """``text`` with the first use of each known abbreviation followed by its words in brackets, and the
    abbreviations written out (short → long form); ``text`` itself and ``{}`` when it uses none. An abbreviation is
    left as it is where the text explains it ("Data Protection Officer (DPO)", "DPO (data protection officer)")
    or says its words in full elsewhere.

    Args:
        text: any text.
        abbreviations: short form → long form (default: :data:`ABBREVIATIONS`).
    """
    known = ABBREVIATIONS if abbreviations is None else abbreviations
    if not known:
        return text, {}
    uses = list(_pattern(frozenset(known)).finditer(text))
    if not uses:
        return text, {}
    lowered = text.lower()
    kept = {
        m.group(1)
        for m in uses
        if _explained(text, m.start(1), m.end(1)) or known[m.group(1)].lower() in lowered
    }
    pieces: list[str] = []
    added: dict[str, str] = {}
    last = 0
    for m in uses:
        short = m.group(1)
        if short in kept or short in added:
            continue
        pieces.append(text[last : m.end(1)])
        pieces.append(f" ({known[short]})")
        added[short] = known[short]
        last = m.end(1)
    if not added:
        return text, {}
    pieces.append(text[last:])
    return "".join(pieces), added


def write_out(text: str, abbreviations: Mapping[str, str] | None = None) -> str:
    """``text`` with the known abbreviations written out after their first use (:func:`written_out`)."""
    return written_out(text, abbreviations)[0]


@lru_cache(maxsize=64)
def _pattern(shorts: frozenset[str]) -> re.Pattern[str]:
    """One pattern for a set of short forms (longest first), each as a whole word."""
    alternatives = "|".join(re.escape(s) for s in sorted(shorts, key=lambda s: (-len(s), s)))
    return re.compile(rf"(?<![A-Za-z0-9&-])({alternatives})(?![A-Za-z0-9&-])")
