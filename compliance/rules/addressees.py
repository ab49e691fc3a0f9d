"""Who a provision obliges: the organisations the act regulates, only public bodies, or nobody.

An article that frames the act obliges nobody: its title says "Definitions", "Scope" or "Subject matter"
(:func:`frames_the_act`; :func:`defines_terms` for the definitions alone). A text that uses a defined term or
names the act is not affected by them.

EU acts address duties in a few fixed forms. A regulation names its addressee ("The controller shall …", "Each
supervisory authority shall …"); a directive addresses the Member States, which pass the duty on ("Member States
shall ensure that essential and important entities take …") or keep it ("Member States shall designate …"). A
control paragraph of an organisation implements the first kind; a provision whose every duty falls on public
bodies — the Member States, the Commission, authorities, CSIRTs, the Board — explains how the state acts (an
authority's reply to a notification, its supervisory powers, the Commission's implementing acts), and a control
that reads like it is not affected by it.

:func:`duty_holders` reads each modal clause (``shall`` / ``may`` / ``must``) of a text: the subject is the noun
phrase before the modal, after the clause's last comma, judged by its head (the first words after the article:
"the competent authorities referred to in …"); where a public body "shall ensure that" or "shall require"
something, the duty passes to what follows; in the passive, to the agent ("shall be provided by the competent
authority"), and a passive without one ("All stakeholders shall be provided access …") has no holder unless its
subject is a public body; ", and shall …" and "… a report and shall …" keep the clause before's subject, and so
does a subject that points back ("Such scanning shall …"); a pronoun after a condition points back to the condition's subject ("Where the
competent authorities become aware …, they shall …"). :func:`addresses_public_bodies` is true when the first such
clause's holder is a public body and public bodies hold most of them. A provision with no modal clause (a point of
a list, a definition) is judged by the text that introduces it (:func:`provision_duty_text`).

The public bodies are the institutional roles of EU legislative drafting, the same in every act, and the bodies an
act sets up itself (:func:`established_bodies`: "EU-CyCLONe is established …"); the regulated addressee
(controller, provider, entity, undertaking, firm …) differs from act to act and is whatever is not one of them.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from compliance.rules.corpus import Law

__all__ = [
    "AUTHORITY_WEIGHT",
    "addresses_public_bodies",
    "defines_terms",
    "duty_holders",
    "established_bodies",
    "frames_the_act",
    "is_final_provision",
    "is_public_body",
    "obliges_public_bodies_only",
    "provision_duty_text",
]

#: what a provision addressed to public bodies only is weighted by where a control is matched to provisions: the
#: alert ranking (``AlertConfig.authority_weight``) and the paragraph or point named within a linked article
#: (``ClassifierLinkConfig.provision_authority_weight``); the framing articles' weight, not tuned (0.7 measured the
#: same on the NIS2 and ePrivacy expectations, docs/alerts.md)
AUTHORITY_WEIGHT = 0.85

#: the institutional roles of EU acts (singular or plural, any case)
_PUBLIC = re.compile(
    r"\b(?:member\s+states?|(?:\w+\s+)?authorit(?:y|ies)|csirts?|enisa|europol|single\s+points?\s+of\s+contact|"
    r"courts?|tribunals?|european\s+parliament|esma|eba|eiopa|berec|ombudsman)\b",
    re.IGNORECASE,
)
#: the institutions acts capitalise ("the Commission", "the Board", "the Cooperation Group"; in UK acts "the
#: Commissioner", "the Secretary of State"), case as written, so that a firm's "management board" is not one
_INSTITUTION = re.compile(
    r"\b(?:Commission|Board|Agency|Council|Committee|Cooperation Group|CSIRTs network|Commissioner|"
    r"Secretary of State|Minister|Treasury|OFCOM|Ofcom)\b"
)
#: where a subject's head noun phrase ends ("the competent authorities | referred to in …", "the free movement |
#: of personal data within the Union"); "single point of contact" is one noun
_HEAD_END = re.compile(
    r"\b(?:of|by|within|under|referred|pursuant|in|to|with|from|as|on|for|against|concerning|adopted|which|who)\b",
    re.IGNORECASE,
)
#: nouns with "of" inside, kept whole when the head is cut ("single point of contact", "Secretary of State")
_COMPOUND = re.compile(r"\b(points?|Secretary)\s+of\s+(contact|State)\b", re.IGNORECASE)
_DETERMINER = re.compile(
    r"^(?:the|a|an|each|every|any|all|their|its|his|her|that|those|these|this)$", re.IGNORECASE
)
_HEAD_WORDS = 4
#: a pronoun subject says nothing of its own about who is obliged
_PRONOUN = re.compile(r"^(?:it|they|he|she|this|these|those|each|either)$", re.IGNORECASE)
#: "… shall be based on …, and shall include …": the same holder as the clause before
#: "Such scanning shall be carried out …", "Those implementing acts shall be adopted …", "…, which shall …": a
#: subject that points back to what an earlier clause spoke of is that clause's business, so it has its holder
_ANAPHORA = re.compile(r"^(?:such|those|that|these|this|which)\b", re.IGNORECASE)
_CONTINUES = re.compile(r"^(?:and|or|but|and/or)(?:\s|$)", re.IGNORECASE)
#: "ENISA shall adopt, in cooperation with …, a biennial report on … and shall present it …": the phrase before
#: the second verb is the first one's object, joined by "and" to a second predicate of the same subject
_COORDINATED = re.compile(r"\s(?:and|or|and/or)$", re.IGNORECASE)
#: a phrase set off by commas between a subject and its verb ("Member States, in accordance with national law,
#: shall"; "ENISA, in cooperation with Member States, and, where appropriate, after consulting relevant
#: stakeholders, shall"; "The Cooperation Group, with the assistance of the Commission, may"): not the subject;
#: "…, in particular such processing shall" names its subject after the adverb
_INSERTED = re.compile(
    r"^(?!in\s+particular\b)(?:in|with|without|after|before|where|when|whenever|if|unless|upon|on|at|by|under|"
    r"pursuant|subject|following|having|taking|as\s+appropriate)\b",
    re.IGNORECASE,
)
#: a lone "and" between inserted phrases (", and, where appropriate,")
_BARE_CONJUNCTION = re.compile(r"^(?:and|or|and/or)$", re.IGNORECASE)
#: ", and, where necessary, relevant stakeholders": an adverbial that qualifies the next item of a list
_WHERE_ADVERB = re.compile(
    r"^(?:where|as|if|when)\s+(?:necessary|appropriate|relevant|applicable|needed)$", re.IGNORECASE
)
#: "… ICT products that may be subject to …": a relative clause, whose subject is the noun before it
_RELATIVE = re.compile(r"\b(?:that|which|who)$", re.IGNORECASE)
#: "25 May 2018" is a date, not a permission ("Article 40 may be carried out" is one)
_MODAL = re.compile(r"\b(?:shall|must|may(?!\s+\d{4}))\b(?:\s+not)?", re.IGNORECASE)
#: "shall ensure that X …", "shall provide (by law) for X to …", "shall require X to …": the duty passes to X
_PASS_ON = re.compile(
    r"^\s*(?:\w+\s+){0,2}?(?:(?:ensure|provide)\s+that\b|provide\s+(?:by\s+law\s+)?for\b|(?:require|oblige)\b)",
    re.IGNORECASE,
)
#: "the guidance shall be provided by the competent authority": the agent holds the duty
_PASSIVE_AGENT = re.compile(r"^\s*be\s+\w+(?:\s+\w+)?\s+by\s+", re.IGNORECASE)
#: "All stakeholders shall be provided access …", "Such scanning shall be carried out …": a passive without an
#: agent names who receives or what undergoes the act, not who must do it (but "The Commission shall be empowered
#: …", "The Board shall be composed of …" are about the public body they name)
_PASSIVE = re.compile(
    r"^\s*(?:not\s+)?be\s+(?:\w+ly\s+)?(?:\w+(?:ed|en|wn)|made|kept|set|put|sent|held|paid|given|brought|"
    r"built|met|told|taken|shown|bound|laid|sought|granted|led|done)\b",
    re.IGNORECASE,
)
#: the conjunctions that open a condition whose subject a later pronoun points back to ("Where the competent
#: authorities become aware …, they shall …")
_CONDITION = re.compile(r"^(?:where|when|whenever|if|once|after|before|unless|until)\s+", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.;:]\s|\n")
#: "… a Cooperation Group is established.", "EU-CyCLONe is established to support …", "The European Data
#: Protection Board (the ‘Board’) is hereby established as a body of the Union": a body the act sets up (not where
#: an organisation "is established in" a Member State)
_ESTABLISHED = re.compile(
    r"(?:^|[.;:,]\s+|\n)([^.;:,\n]{2,160}?)\s+(?:is|are)\s+(?:hereby\s+)?established\b"
    r"(?!\s+(?:in|on|within|outside|by|under|at)\b)",
)
_QUOTED_NAME = re.compile(r"\((?:the\s+)?[‘'\"“]?([^()‘’'\"“”]{2,40})[’'\"”]?\)")
_NOT_A_NAME = re.compile(
    r"\b(?:where|which|that|who|whom|whose|if|when|unless|shall|must|may|it|they)\b", re.IGNORECASE
)
_CLAUSE_START = re.compile(r"[.;:,\n]")
_PARENS = re.compile(r"\([^()]*\)")
_WORDS_AFTER = 5  # the subject of the clause that follows, before its verb's object
_DEFINES = re.compile(r"\bdefinitions?\b", re.IGNORECASE)
_FRAMES = re.compile(r"\b(?:definitions?|scope|subject[- ]matter)\b", re.IGNORECASE)
#: the titles EU drafting gives an act's final provisions (the Joint Practical Guide's standard articles): what
#: another act becomes ("Amendment of Regulation (EU) No 910/2014", "Amendments to Directive …", "Repeal"), when
#: the act applies and to whom it is addressed, how it is transposed, and the Commission's delegated and
#: implementing powers — none obliges a regulated organisation
_FINAL = re.compile(
    r"^(?:(?:amendments?\s+(?:of|to)|amending|repeal\s+of)\s+(?:council\s+)?(?:regulation|directive|"
    r"(?:framework\s+)?decision)\b|repeal$|entry\s+into\s+force\b|addressees?$|transposition\b|"
    r"committee\s+procedure$|exercise\s+of\s+the\s+delegation$|final\s+provisions$)",
    re.IGNORECASE,
)


def defines_terms(title: str | None) -> bool:
    """Whether an article's title says it defines the act's terms ("Definitions")."""
    return bool(_DEFINES.search(title or ""))


def frames_the_act(title: str | None) -> bool:
    """Whether an article's title says it frames the act: "Definitions", "Scope", "Subject matter (and scope)",
    or it is one of the act's final provisions: "Amendment of Directive (EU) 2018/1972", "Repeal", "Entry into
    force (and application)", "Addressees", "Transposition", "Committee procedure", "Exercise of the delegation"
    (:func:`is_final_provision`)."""
    return bool(_FRAMES.search(title or "")) or is_final_provision(title)


def is_final_provision(title: str | None) -> bool:
    """Whether an article's title is one EU drafting gives a final provision — one that amends or repeals another
    act, says when the act enters into force, to whom it is addressed or how it is transposed, or governs the
    Commission's delegated and implementing powers: "Amendment of Regulation (EU) No 910/2014", "Amendments to
    Directive 2002/58/EC", "Repeal of Directive 95/46/EC", "Entry into force and application", "Addressees",
    "Transposition", "Committee procedure", "Exercise of the delegation" — not "Amendment of rights and
    obligations" (the EECC's Art. 18, a duty of its own): what is amended or repealed must be an act."""
    return bool(_FINAL.search((title or "").strip()))


def _without_determiners(words: list[str]) -> list[str]:
    """``words`` without the articles and determiners they open with ("the", "each", "their" …)."""
    start = 0
    while start < len(words) and _DETERMINER.match(words[start]):
        start += 1
    return words[start:]


def is_public_body(phrase: str, bodies: tuple[str, ...] = ()) -> bool:
    """Whether a subject phrase's head names a public body (a Member State, an authority, the Commission …): "the
    competent authorities referred to in paragraph 1" does, "the free movement of personal data within the Union"
    does not. ``bodies`` are further names of public bodies (those an act establishes: :func:`established_bodies`),
    matched as written at the start of the phrase, so that the GDPR's "Board" is not a firm's "board of
    directors"."""
    if bodies:
        start = " ".join(_without_determiners(phrase.split()))
        if any(start.startswith(body) and not start[len(body) : len(body) + 1].isalnum() for body in bodies):
            return True
    head = _HEAD_END.split(_COMPOUND.sub(r"\1_of_\2", phrase), 1)[0]
    words = _without_determiners(head.split())
    # the noun phrase, not the verb and object after it ("essential entities notify their CSIRT")
    head = " ".join(words[:_HEAD_WORDS]).replace("_of_", " of ")
    return bool(_PUBLIC.search(head) or _INSTITUTION.search(head))


def _subject_before(text: str, end: int) -> str:
    """The phrase before position ``end`` back to the clause's start (the last comma, semicolon …); a pronoun
    ("…, it shall"), an inserted phrase ("Member States, in accordance with national law, shall") and a lone
    "and" between inserted phrases are passed over for the segment before them (up to five segments back); after a
    pronoun the clause before it is taken whatever its first word ("Where a Member State designates …, it shall":
    the antecedent is there); "and" right before the verb (", and shall include") is returned as it is."""
    segments = [seg.strip() for seg in _CLAUSE_START.split(text[:end]) if seg.strip()] or [""]
    if _CONTINUES.match(segments[-1]):
        return segments[-1]
    pronoun = False
    last = segments[-5:]
    for i in range(len(last) - 1, -1, -1):
        seg = last[i]
        if _PRONOUN.match(seg):
            condition = _condition_subject(text[:end])
            if condition:  # "Where the competent authorities become aware …, …, they shall": its subject
                return condition
            pronoun = True  # "…, it shall": the antecedent is in the clause before
        elif not pronoun and _continues_inserted(last[:i]):
            continue  # "…, after consulting X, and, where necessary, relevant stakeholders, shall": X's list
        elif pronoun or not (_INSERTED.match(seg) or _BARE_CONJUNCTION.match(seg)):
            return seg
    return ""


def _condition_subject(before: str) -> str:
    """The words after the conjunction of the first condition of the sentence that ``before`` ends in ("Where the
    competent authorities become aware that …, they shall": "the competent authorities become aware that …"), or
    "" when the sentence opens no condition."""
    starts = [m.end() for m in _SENTENCE_END.finditer(before)]
    sentence = before[starts[-1] :] if starts else before
    for seg in _CLAUSE_START.split(sentence):
        seg = seg.strip()
        if m := _CONDITION.match(seg):
            rest = seg[m.end() :]
            # "If in its opinion, BEREC shares …, it shall": an inserted phrase, not the condition's subject
            return "" if _INSERTED.match(rest) else rest
    return ""


def _continues_inserted(before: list[str]) -> bool:
    """Whether the segment after ``before`` ends the object list of an inserted phrase: ``before`` ends with an
    inserted phrase, a lone "and"/"or" and a "where necessary" ("The Commission, after consulting the Cooperation
    Group and ENISA, and, where necessary, relevant stakeholders, shall": the stakeholders are consulted, the
    Commission is the subject)."""
    return (
        len(before) >= 3
        and bool(_INSERTED.match(before[-3]))
        and bool(_BARE_CONJUNCTION.match(before[-2]))
        and bool(_WHERE_ADVERB.match(before[-1]))
    )


def duty_holders(text: str, bodies: tuple[str, ...] = ()) -> list[tuple[str, bool]]:
    """Each modal clause's duty holder in ``text``: ``(phrase, is a public body)``, in order. A clause that goes on
    from the one before ("…, and shall include", "ENISA shall adopt … a report … and shall present it") has that
    clause's subject, read again with the new verb (where the one before passed its duty on, the new verb need not:
    "Member States shall ensure that such fees are … and shall take into account …"); when the clause before had
    no holder, the last holder; where a public body "shall ensure that" or "shall require" something, the holder is what follows (up to five words, before any comma: "shall
    ensure that, when considering …, those entities take …" cannot be read and is not taken for a public body); in
    the passive, the agent ("… shall be provided by the competent authority"); a subject that points back to what
    an earlier clause spoke of ("Such scanning shall …", "Those implementing acts shall …", "…, which shall …")
    has that clause's holder; a passive without an agent ("All stakeholders shall be provided access …") has no
    holder, unless its subject is a public body ("The Commission shall be empowered …"). ``bodies``: further
    public bodies (:func:`is_public_body`)."""
    clean = _PARENS.sub(" ", text)
    out: list[tuple[str, bool]] = []
    written = ""  # the clause before's holder as read (a passive's agent), before its duty passes on
    for m in _MODAL.finditer(clean):
        subject = _subject_before(clean, m.start())
        if not subject:
            continue
        if written and (_CONTINUES.match(subject) or _COORDINATED.search(subject)):
            subject = written  # "…, and shall ensure that …", "X shall adopt a report and shall …": X's again
        elif _CONTINUES.match(subject):
            # the clause before had no holder ("They shall be based on …, and shall"): the last holder
            if out:
                out.append(out[-1])
            continue
        written = ""
        public = is_public_body(subject, bodies)
        rest = clean[m.end() :]
        agent = _PASSIVE_AGENT.match(rest)
        if out and not agent and (_ANAPHORA.match(subject) or _RELATIVE.search(subject)):
            # "Such scanning shall …": the scanner's duty; "… products that may be subject to …": no new holder
            out.append(out[-1])
            written = subject
            continue
        if not agent and not public and _PASSIVE.match(rest):
            continue  # who receives ("stakeholders shall be provided access") or what undergoes the act
        if agent:  # "the guidance shall be provided by the competent authority": the authority
            subject = " ".join(_CLAUSE_START.split(rest[agent.end() :], 1)[0].split()[:_WORDS_AFTER])
            public = is_public_body(subject, bodies)
        written = subject
        passed = _PASS_ON.match(rest)
        if public and passed:  # "Member States shall ensure that essential entities take …": the entities
            following = " ".join(_CLAUSE_START.split(rest[passed.end() :], 1)[0].split()[:_WORDS_AFTER])
            subject, public = following, bool(following) and is_public_body(following, bodies)
        out.append((subject, public))
    return out


@lru_cache(maxsize=8192)  # a pure reading of the text: the alert ranking asks for every passage, twice a run
def addresses_public_bodies(text: str, bodies: tuple[str, ...] = ()) -> bool:
    """True when ``text``'s first modal clause obliges (or permits) a public body and public bodies hold more than
    half of its modal clauses: a provision states its main duty first, and the reading of a clause's subject is
    shallow — "…, as the case may be", "by 25 May 2018 and, without delay, …" or "Within a period of three weeks …"
    are read as clauses whose holder is not a public body — so one such clause does not decide for the rest, while
    a provision that gives a regulated organisation as many duties as a public body ("The CSIRT shall provide a
    response. The entity concerned shall submit a final report.") is not the state's business only."""
    holders = duty_holders(text, bodies)
    if not holders or not holders[0][1]:
        return False
    return 2 * sum(public for _, public in holders) > len(holders)


def obliges_public_bodies_only(law: Law, key: str) -> bool:
    """Whether provision ``key`` of ``law`` (a point read with the text that introduces it) obliges public bodies
    only: what the alert ranking and the provision picker weight down. The bodies the act itself establishes
    (:func:`established_bodies`) count as public bodies."""
    return addresses_public_bodies(provision_duty_text(law, key), established_bodies(law))


def _is_proper_name(words: list[str]) -> bool:
    """Whether a noun phrase is a name, as a body's is ("Cooperation Group", "network of national CSIRTs",
    "EU-CyCLONe"): a capital after a word's first letter or in a word after the first; "appropriate and consistent
    procedures" is none, nor "Appropriate procedures" at the start of a sentence."""
    return any(any(c.isupper() for c in w[1:]) for w in words) or any(w[:1].isupper() for w in words[1:])


_BODIES: dict[tuple[str, str, str, int], tuple[str, ...]] = {}


def established_bodies(law: Law) -> tuple[str, ...]:
    """The names of the bodies ``law`` sets up ("a Cooperation Group is established", "EU-CyCLONe is established
    to …", "The European Data Protection Board (the ‘Board’) is hereby established …"): the name without its
    article and the short name in brackets after it. An organisation that "is established in" a Member State, or a
    clause that only states a fact ("unless it is established that …"), is none."""
    cache_key = (law.identifier, law.short_name, law.checksum, len(law.provisions))
    if cache_key in _BODIES:
        return _BODIES[cache_key]
    names: list[str] = []
    for prov in law.provisions:
        if not prov.key.startswith("art:") or "established" not in prov.text:
            continue
        for m in _ESTABLISHED.finditer(prov.text):
            phrase = m.group(1).strip()
            short = _QUOTED_NAME.search(phrase)
            bare = " ".join(_PARENS.sub(" ", phrase).split())
            if _NOT_A_NAME.search(bare):
                continue
            words = _without_determiners(bare.split())
            if words and len(words) <= 10 and _is_proper_name(words):
                names.append(" ".join(words))
                if short:
                    names.append(short.group(1).strip())
    _BODIES[cache_key] = found = tuple(dict.fromkeys(names))
    return found


def provision_duty_text(law: Law, key: str) -> str:
    """The text that states a provision's duty: its own text when it has a modal clause; for a point, the words
    that introduce its list ("Member States shall ensure that the competent authorities … have the power to
    subject those entities at least to:") followed by the point, when they have one — not its sibling points or
    the sentences after the list, which may oblige someone else ("The results of any targeted security audit shall
    be made available …"); otherwise the text of the provision it belongs to (a point's paragraph, a paragraph's
    article), nearest first."""
    parts = key.split("/")
    own = law.text_of(key)
    if _MODAL.search(own):
        return own
    chain = [own]
    for n in range(len(parts) - 1, 0, -1):
        parent = "/".join(parts[:n])
        lead = _lead_in(law, parent)
        if _MODAL.search(lead):
            return "\n".join([lead, *reversed(chain)])
        text = law.text_of(parent)
        if _MODAL.search(text):
            return text
        if lead:
            chain.append(lead)
    return own


#: the label that opens a point's text as printed in its paragraph ("(a) ", "(iv) ", "1. ")
_POINT_LABEL = re.compile(r"(?:\(\s*[0-9a-z]{1,6}\s*\)|[0-9a-z]{1,6}[.)])\s*$", re.IGNORECASE)


def _lead_in(law: Law, key: str) -> str:
    """The words of provision ``key`` before its first point (its list's lead-in), or "" when it has no points or
    the first point's text cannot be found in it."""
    prov = law.get(key)
    points = [c for c in law.children(key) if c.kind == "point" and c.text]
    if not points or not prov.text:
        return ""
    at = prov.text.find(points[0].text)
    if at <= 0:
        return ""
    return _POINT_LABEL.sub("", prov.text[:at]).strip()
