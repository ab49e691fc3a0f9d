"""The law's sentences restated in the words of an organisation's own policies (training data, issue 13).

The classifier learns every article from the regulation's own sentences, and realistic text does not speak that
language: a policy says "we", "our suppliers", "the customer", "the regulator", "a data breach", "the privacy
notice", "must", where the law says "the controller", "the processor", "the data subject", "the supervisory
authority", "a personal data breach", "provide the data subject with the following information", "shall". A
control such as "Privacy notices state who we are, the DPO contact and the purposes" then shares almost no word
with Art. 13, and the small encoder ranks it there seventh.

:func:`restate` rewrites one training sentence of the law into that register with a short glossary of the terms
the profession uses for the GDPR's defined terms (the controller speaks of itself as "we"; a processor is a
supplier, vendor or service provider; information given to data subjects at collection is the privacy notice; a
data protection impact assessment is a DPIA; …) and the policy's modal ("shall" → "must"; "the controller
shall" → "we"). It adds no fact and no label: the restated sentence keeps the article of the sentence it comes
from, and the recipe option that uses it (:attr:`compliance.models.data.DataConfig.restated`) adds it to that
article's training group beside the original — the training data stays reproducible from the official text alone.
Where a term has several everyday names, a hash of the sentence picks one, so that the same sentence is always
restated the same way and the group as a whole sees every name.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence

__all__ = ["GLOSSARY", "restate"]

#: (legal term pattern, everyday names), applied in this order (longer terms first); ``\b`` word boundaries,
#: case-insensitive; the replacement keeps a capital first letter where the legal term had one
GLOSSARY: tuple[tuple[str, tuple[str, ...]], ...] = (
    # information to data subjects is given in the privacy notice (Art. 13, 14, 12)
    (
        r"provide the data subjects? with (?:the following|all of the following|the) information",
        ("state in the privacy notice", "tell people in our privacy notice", "include in the privacy notice"),
    ),
    (
        r"the information referred to in",
        ("the privacy information listed in", "the privacy notice content in"),
    ),
    (
        r"personal data breach(es)?",
        ("data breach", "security incident affecting personal data", "data breach"),
    ),
    (r"data protection impact assessments?", ("DPIA", "privacy impact assessment", "DPIA")),
    (r"data protection officers?", ("DPO", "privacy officer", "DPO")),
    (r"supervisory authorit(?:y|ies)", ("data protection authority", "regulator", "ICO")),
    (r"records? of processing activities", ("record of processing", "RoPA", "processing register")),
    (r"standard data protection clauses", ("standard contractual clauses", "SCCs")),
    (r"binding corporate rules", ("BCRs", "binding corporate rules")),
    (
        r"technical and organisational measures",
        ("security controls", "technical and organisational controls"),
    ),
    (r"third countr(?:y|ies)", ("country outside the EEA", "non-EU country")),
    (r"another processor", ("a sub-processor", "a subcontractor")),
    (r"(?<!-)the processors?", ("the supplier", "the vendor", "the service provider")),
    (r"(?<!-)processors", ("suppliers", "vendors", "service providers")),
    (r"(?<!-)processor", ("supplier", "vendor", "service provider")),
    (r"natural persons", ("individuals", "people")),
    (r"a natural person", ("an individual", "a person")),
    (r"(?:the )?data subjects", ("individuals", "customers", "employees", "users")),
    (r"the data subject", ("the individual", "the customer", "the employee", "the user")),
    (r"a data subject", ("an individual", "a customer", "an employee", "a user")),
    (r"Union or Member State law", ("applicable law", "the law")),
    (r"Member State law", ("national law",)),
    (r"erasure", ("deletion",)),
    (r"rectification", ("correction",)),
    (r"his or her", ("their",)),
)

_COMPILED = tuple((re.compile(rf"\b{pattern}\b", re.IGNORECASE), names) for pattern, names in GLOSSARY)
#: the controller as subject of a modal or auxiliary: the organisation speaking of itself
_CONTROLLER_SUBJECT = re.compile(
    r"\b(?:the|each|a|any) controllers? (shall|may|must|should|is|are|has|have)\b( not)?", re.IGNORECASE
)
_CONTROLLER_POSSESSIVE = re.compile(r"\bthe controller's\b", re.IGNORECASE)
_CONTROLLER = re.compile(r"\bthe controller\b", re.IGNORECASE)
_SHALL = re.compile(r"\bshall\b", re.IGNORECASE)
_SUBJECT_VERB = {"shall": "", "may": "may", "must": "must", "should": "should", "is": "are", "are": "are"}
_SUBJECT_VERB |= {"has": "have", "have": "have"}


def _pick(names: Sequence[str], text: str, salt: int) -> str:
    digest = hashlib.sha256(f"{salt}:{text}".encode()).digest()
    return names[digest[0] % len(names)]


def _cased(replacement: str, original: str) -> str:
    if original[:1].isupper() and replacement[:1].islower():
        return replacement[:1].upper() + replacement[1:]
    return replacement


def _namer(names: Sequence[str], sentence: str, salt: int) -> Callable[[re.Match[str]], str]:
    """The replacement of one glossary term in ``sentence``: the name its hash picks, cased like the term."""

    def name(match: re.Match[str]) -> str:
        return _cased(_pick(names, sentence, salt), match.group(0))

    return name


def restate(sentence: str) -> str:
    """``sentence`` (a sentence of the law) in the words of a policy; the sentence itself where nothing
    changes. Deterministic."""
    text = sentence

    def controller_subject(match: re.Match[str]) -> str:
        verb = _SUBJECT_VERB[match.group(1).lower()]
        negation = match.group(2) or ""
        words = " ".join(w for w in ("we", verb or ("do" if negation else "")) if w) + negation
        return _cased(words, match.group(0))

    text = _CONTROLLER_SUBJECT.sub(controller_subject, text)
    text = _CONTROLLER_POSSESSIVE.sub(lambda m: _cased("our", m.group(0)), text)
    text = _CONTROLLER.sub(_namer(("us", "the company", "the organisation"), sentence, 0), text)
    for salt, (pattern, names) in enumerate(_COMPILED, start=1):
        text = pattern.sub(_namer(names, sentence, salt), text)
    text = _SHALL.sub(lambda m: _cased("must", m.group(0)), text)
    return re.sub(r"\s{2,}", " ", text)
