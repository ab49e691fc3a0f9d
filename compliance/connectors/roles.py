"""Paragraph roles: what each paragraph of a document does, decided from structure first, then by a small model.

Roles (:data:`~compliance.connectors.document.ParagraphRole`): ``statement`` (an obligation, control, practice or
commitment), ``definition``, ``description`` (purpose, scope, background, explanation), ``heading``, ``metadata``
(owner, version, approval, review dates, classification, revision history), ``form`` (fill-in blanks, signature
blocks, check boxes), ``furniture`` (page headers and footers, banners, template credits) and ``reference`` (a
pointer elsewhere: "Details … are documented at …", "See section 4"). Only :data:`MAPPED_ROLES` are mapped to
law articles and indexed as controls by default.

How a role is decided, in order:

1. **Certain structure wins** (:func:`certain_role`): a heading paragraph is a ``heading``; a role a connector set
   from the layout (a page header or footer found by its position) stays; a bare page number is ``furniture``; a
   table row whose columns all name document metadata, a version and a date among them, is ``metadata`` (an
   entry of the revision history, however its change is worded); and a short line that recurs at the edge of
   pages or documents across a batch (the same running header in every single-page PDF of a folder), with no
   obligation in it, is ``furniture``.
2. **A small trained model** (:class:`RoleModel`) decides the rest: multinomial logistic regression over cheap
   features of the paragraph and its place (:func:`paragraph_features`: table position, key:value shape and the
   keys used, placeholders, modal verbs, cue words, the section it sits in, repetition across pages and across
   the documents of the batch) and, where an encoder is available, the paragraph's sentence embedding
   (all-MiniLM-L6-v2). The model ships with the package (``role_model/``, trained by ``compliance roles train``
   on the labelled role set built by ``tools/roles/build_role_set.py``); without an encoder its
   structure-only head is used.

:func:`assign_roles` does both for a batch of parsed documents (the repetition counts span the batch); the
connectors call it for each document they parse, and the ingest use case calls it again over the whole batch
with the encoder.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compliance.connectors.document import PARAGRAPH_ROLES, Paragraph, ParagraphRole, ParsedDocument
from compliance.connectors.lists import introduces_list, lead_in_contexts

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

__all__ = [
    "FEATURE_NAMES",
    "MAPPED_ROLES",
    "ROLE_MODEL_SPEC",
    "Embedder",
    "RoleContext",
    "RoleModel",
    "assign_roles",
    "certain_role",
    "default_role_model",
    "document_features",
    "is_lead_in",
    "layout_roles",
    "paragraph_features",
    "role_counts",
]

logger = logging.getLogger(__name__)

#: the roles the audit maps to law articles and the alerts index as controls (by default)
MAPPED_ROLES: frozenset[ParagraphRole] = frozenset({"statement", "definition"})

#: texts in, one embedding row per text out (L2-normalised float32)
Embedder = Callable[[Sequence[str]], "np.ndarray"]

# -- cues ---------------------------------------------------------------------------------------------------------
_WORD_RE = re.compile(r"[A-Za-zÀ-ÿ][A-Za-zÀ-ÿ'’-]*")
_ENUM_RE = re.compile(r"^(?:\(?[0-9]{1,3}(?:\.[0-9]{1,3})*[.)]?|\(?[a-z][.)]|\(?[ivx]{1,5}[.)])\s")
_KEY_VALUE_RE = re.compile(r"^([^:;\n]{1,48}):\s+\S")
_PAIR_RE = re.compile(r"(?:^|; )([^:;\n]{1,48}):\s")
_FIRST_VALUE_RE = re.compile(r"^[^:;\n]{1,48}:\s+([^;\n]{1,60})(?:;|$)")
_PAGE_RE = re.compile(r"^(?:page\s*)?\d+(?:\s*(?:of|/)\s*\d+)?$", re.IGNORECASE)
_BLANK_RE = re.compile(r"_{3,}|\.{5,}|☐|\[ \]|__/__|dd/mm/yyyy", re.IGNORECASE)
_BRACKET_RE = re.compile(r"\[[^\]]{2,40}\]")
_URL_RE = re.compile(r"https?://|www\.|\b[\w.-]+@[\w-]+\.\w+")
_MODAL_RE = re.compile(
    r"\b(shall|must|will|should|required|requires|require|ensures?|prohibited|not permitted|may not|"
    r"is responsible|are responsible|undertakes?|agrees? to|is to be|are to be|needs? to)\b",
    re.IGNORECASE,
)
_PASSIVE_RE = re.compile(r"\b(?:is|are|be|been)\s+(?:\w+ly\s+)?\w+(?:ed|en)\b", re.IGNORECASE)
_METADATA_KEYS = re.compile(
    r"\b(owner|version|revision|rev|approv\w*|effective|review\w*|classification|document (?:id|number|ref\w*)|"
    r"author|status|date|distribution|updated|issue|standard number|procedure id|reference|valid|supersedes)\b",
    re.IGNORECASE,
)
#: the keys of a revision history or change log: the columns of its table ("Summary of change", "Description of
#: changes", "Changed by") and the dated or versioned entries of a log ("- 2025-03-18: …", "Version 3.1, May 2025:
#: …", "v2.0 (2025-02-19): …") — a whole key, so that a glossary's "Standard change: …" stays a definition
_HISTORY_KEY_RE = re.compile(
    r"^(?:(?:summary|description|date|reason|details?) (?:of|for) )?(?:the )?(?:changes?|amendments?|modifications?)"
    r"(?: (?:made|description|summary|history|details))?$"
    r"|^(?:changed|amended|modified|revised|prepared|updated) by$"
    r"|^(?:revision|version|change|document) history$"
    r"|^\W*(?:v(?:ersion)?\.? ?\d+(?:\.\d+)*\b|rev(?:ision)?\.? ?[0-9A-Z]\b|\d{4}-\d{2}(?:-\d{2})?\b"
    r"|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b|(?:\d{1,2} )?(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|"
    r"july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.? \d{4}\b)",
    re.IGNORECASE,
)


_VERSION_KEY_RE = re.compile(r"\b(?:version|revision|rev|issue)\b", re.IGNORECASE)
_DATE_KEY_RE = re.compile(r"\b(?:date|dated|approved on|effective)\b", re.IGNORECASE)


def _metadata_key(key: str) -> bool:
    """Whether a key of a key:value paragraph or a table column names document metadata (owner, version, approval,
    dates, …) or an entry of its revision history."""
    key = key.strip()
    return bool(_METADATA_KEYS.search(key) or _HISTORY_KEY_RE.search(key))


_CUES: dict[str, re.Pattern[str]] = {
    "cue_means": re.compile(r"\b(means|refers to|is defined as|shall mean|are defined as)\b", re.IGNORECASE),
    "cue_term_dash": re.compile(
        r"^[\"“‘']?[A-Z*][\w*\"”’' /()-]{1,48}[\"”’']?\s*(?:—|–| - |:)\s*(?:a|an|the|any)\b"
    ),
    "cue_reference": re.compile(
        # "described in this notice" qualifies what the sentence is about, it points nowhere: a pointer's "in" is
        # not followed by "this" or "these"
        r"\b(see|refer to|documented at|"
        r"(?:(?:documented|described|set out|listed|kept|maintained) in|available (?:at|on|in|from))"
        r"(?! th(?:is|ese)\b)|"
        r"published on|details (?:of|are|on)|more information|further information|"
        r"guidance on|instructions for|"
        # "Read our Cookie Policy for …": a named document to read
        r"read (?:our|the) (?-i:[A-Z])\w*|"
        # what says where something is kept: "the rules … are in the CCTV Procedure", "… is in the GRC portal"
        # (a capital after the article: a named document or system)
        r"(?:is|are) (?:held |filed |found )?in (?:the|our) (?-i:[A-Z])\w*)\b",
        re.IGNORECASE,
    ),
    "cue_named_doc": re.compile(
        r"\b[A-Z][\w-]*(?: [A-Z][\w-]*)* (Policy|Procedure|Standard|Guideline|Plan|Handbook|Schedule|Checklist|"
        r"Agreement|Register|Runbook|Notice)\b"
    ),
    "cue_section": re.compile(r"\b(section|clause|appendix|annex|chapter|part)\s+[0-9A-Z]", re.IGNORECASE),
    "cue_this_doc": re.compile(
        r"\b(this|the) (policy|procedure|standard|document|notice|plan|schedule|checklist|catalogue|form|"
        r"template|agreement|addendum|page|questionnaire|guideline)\b",
        re.IGNORECASE,
    ),
    "cue_purpose": re.compile(
        # "objective", but not a recovery time or point objective (a target a control sets, not a purpose)
        r"\b(purpose|aims?|describes|explains|summari[sz]es|sets out|applies to|is intended|"
        r"(?<!time )(?<!point )objective|overview|"
        r"introduction|background|in order to|helps?)\b",
        re.IGNORECASE,
    ),
    # a sentence whose subject is a part of the document itself ("The table below summarises …", "This section
    # describes …", "The following table lists …"): it says what the document holds, not what anyone does
    "cue_self_description": re.compile(
        r"(?:^|[.!?:]\s+)(?:[\d.]+\s+)?(?:the|this|these) (?:following )?(?:tables?|sections?|annex(?:es)?|appendix|"
        r"appendices|chapters?|figures?|diagrams?|lists?|matri(?:x|ces)|schedules?)(?: below| above| that follows?)? "
        r"(?:summari[sz]es|lists|shows|sets out|describes|explains|gives|provides|contains|outlines|presents|"
        r"illustrates|defines|records|identifies|specifies)\b",
        re.IGNORECASE,
    ),
    "cue_example": re.compile(
        r"\b(for example|e\.g\.|such as|in \d{4}|most|many|often|usually)\b", re.IGNORECASE
    ),
    "cue_furniture": re.compile(
        r"\b(uncontrolled|printed|confidential|internal use|all rights reserved|copyright|template|"
        r"page \d+|version \d|rev\.? \w|proprietary|do not (?:copy|alter|distribute))\b|©",
        re.IGNORECASE,
    ),
    "cue_form": re.compile(
        r"\b(signature|signed|sign here|name:|date:|by:|title:|yes\s*/\s*no|tick|complete (?:this|the)|"
        r"for (?:it|office) use)\b",
        re.IGNORECASE,
    ),
    "cue_we": re.compile(r"\b(we|our|us)\b", re.IGNORECASE),
    "cue_you": re.compile(r"\b(you|your)\b", re.IGNORECASE),
    "cue_question": re.compile(
        r"\?(?:\s|;|$)|^(do|does|is|are|have|has|who|how|what|which|when)\b", re.IGNORECASE
    ),
    "cue_period": re.compile(
        r"\b(\d+|one|two|three|four|five|six|seven|ten|twelve|thirty)\s+(?:working |business |calendar )?"
        r"(minutes?|hours?|days?|weeks?|months?|years?)\b|\b(daily|weekly|monthly|quarterly|annual(?:ly)?|"
        r"every|each|at least|within|no later than|immediately)\b",
        re.IGNORECASE,
    ),
    "cue_term_keys": re.compile(
        r"(?:^|; )(term|meaning|definition|glossary|abbreviation|acronym|level|category|tier)s?:",
        re.IGNORECASE,
    ),
    "cue_action_verb": re.compile(
        r"\b(we|staff|employees|users|suppliers?|the \w+(?: \w+)?)\s+(?:also |only |never |do not |does not )?"
        r"(collect|keep|store|share|use|send|review|encrypt|delete|notify|inform|report|approve|record|monitor|"
        r"test|back up|restrict|process|receive|protect|retain|assess|grant|revoke|log|scan|train)s?\b",
        re.IGNORECASE,
    ),
}
_SECTION_CUES: dict[str, re.Pattern[str]] = {
    "sec_definitions": re.compile(r"definition|glossary|terms|interpretation|meaning", re.IGNORECASE),
    "sec_metadata": re.compile(
        r"document control|revision|version|history|change log|changelog|approval|sign-?off|about this document",
        re.IGNORECASE,
    ),
    # a section of references ("References", "Normative references", "Reference documents"), not a document that
    # is one ("Password Quick Reference", a reference guide): what it holds is the document's own text
    "sec_references": re.compile(
        r"\breferenc(?:es|ed)\b|^(?:[\d.]+\s+)?reference\b|\breference (?:documents?|materials?|list)|related|see also|"
        r"further information|contact",
        re.IGNORECASE,
    ),
    "sec_intro": re.compile(
        r"purpose|scope|introduction|overview|background|about|objective|why", re.IGNORECASE
    ),
    "sec_form": re.compile(
        r"details|declaration|signature|for (?:it|office) use|section [a-z]\b|part \d", re.IGNORECASE
    ),
}


def _case_free(pattern: re.Pattern[str]) -> re.Pattern[str] | None:
    """``pattern`` without ``re.IGNORECASE``, to be matched against the lowercased text of an ASCII paragraph: the
    same matches at the same places (lowercasing ASCII keeps every length and word boundary), and Python's regular
    expressions run several times faster without the flag. None for a pattern that is not case-insensitive, or that
    reads case (``(?-i:…)``, a capital outside an escape such as ``[0-9A-Z]``), which a lowered text would not meet."""
    if not pattern.flags & re.IGNORECASE or "(?-i" in pattern.pattern:
        return None
    if re.search(r"[A-Z]", re.sub(r"\\.", "", pattern.pattern)):
        return None
    return re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)


#: the case-insensitive feature patterns, compiled to run on an ASCII paragraph's lowercased text
#: (:func:`_case_free`; ``tests/test_roles.py`` checks the same features either way)
_LOWERED: dict[str, re.Pattern[str]] = {
    name: lowered
    for name, pattern in (
        *_CUES.items(),
        ("blanks", _BLANK_RE),
        ("modals", _MODAL_RE),
        ("passives", _PASSIVE_RE),
    )
    if (lowered := _case_free(pattern)) is not None
}


def _matches(name: str, pattern: re.Pattern[str], text: str, lowered: str | None) -> list[Any]:
    """``pattern.findall(text)``, run on ``lowered`` (the text lowercased, when it is ASCII) where the pattern
    allows (:data:`_LOWERED`)."""
    if lowered is not None and (fast := _LOWERED.get(name)) is not None:
        return fast.findall(lowered)
    return pattern.findall(text)


FEATURE_NAMES: tuple[str, ...] = (
    "bias_one",
    "kind_paragraph",
    "kind_list",
    "kind_table_row",
    "kind_heading",
    "before_first_heading",
    "page_edge",
    "heading_depth",
    "log_chars",
    "log_words",
    "sentences",
    "ends_period",
    "ends_colon",
    "ends_no_punct",
    "starts_enumerator",
    "upper_ratio",
    "title_ratio",
    "digit_ratio",
    "key_value",
    "pairs",
    "metadata_keys",
    "metadata_key_first",
    "blanks",
    "blank_share",
    "brackets",
    "url_or_email",
    "modals",
    "passives",
    "short_label",
    "page_number",
    *_CUES,
    *_SECTION_CUES,
    "repeated_in_document",
    "repeated_across_documents",
    "table_cells",
)


# -- batch context ----------------------------------------------------------------------------------------------
@lru_cache(maxsize=8192)
def normalise(text: str) -> str:
    """Lower case, digits as ``#``, whitespace collapsed: how repetition is recognised (cached: the role features
    ask for a paragraph's form several times — its document's counts, the batch's, its own)."""
    return re.sub(r"\s+", " ", re.sub(r"\d+", "#", text.lower())).strip(" .;:")


@dataclass(frozen=True)
class RoleContext:
    """How often each (normalised) short paragraph text occurs across the documents of a batch."""

    documents: int = 1
    doc_counts: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def from_documents(cls, docs: Iterable[ParsedDocument]) -> RoleContext:
        """Count, for every paragraph text of at most 40 words, the documents it occurs in."""
        counts: Counter[str] = Counter()
        n = 0
        for doc in docs:
            n += 1
            counts.update({normalise(p.text) for p in doc.paragraphs if len(p.text.split()) <= 40})
        return cls(n, dict(counts))

    def documents_with(self, text: str) -> int:
        """The number of documents of the batch containing ``text`` (normalised); 1 when unknown."""
        return max(1, self.doc_counts.get(normalise(text), 1))


def _page_edges(doc: ParsedDocument) -> set[int]:
    """Ordinals of the first and last paragraph of every page (of the document when it has no pages)."""
    edges: set[int] = set()
    by_page: dict[int | None, list[int]] = {}
    for p in doc.paragraphs:
        by_page.setdefault(p.page, []).append(p.ordinal)
    for ordinals in by_page.values():
        edges.update((ordinals[0], ordinals[-1]))
    return edges


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def paragraph_features(
    doc: ParsedDocument,
    para: Paragraph,
    context: RoleContext,
    *,
    edges: set[int] | None = None,
    in_document: Counter[str] | None = None,
) -> list[float]:
    """The cheap features of one paragraph, in :data:`FEATURE_NAMES` order.

    Args:
        doc: the document the paragraph belongs to.
        para: the paragraph.
        context: repetition counts across the batch.
        edges: ordinals at the edge of a page (computed when omitted).
        in_document: how often each normalised text occurs in ``doc`` (computed when omitted).
    """
    text = para.text
    edges = _page_edges(doc) if edges is None else edges
    if in_document is None:
        in_document = Counter(normalise(p.text) for p in doc.paragraphs)
    words = _WORD_RE.findall(text)
    letters = sum(map(str.isalpha, text))  # counted in C: this runs for every paragraph of an audit
    upper = sum(map(str.isupper, filter(str.isalpha, text)))
    stripped = text.rstrip()
    first_line = text.split("\n", 1)[0]
    keys = [m.group(1) for m in _PAIR_RE.finditer(text)] if para.kind == "table-row" else []
    kv = _KEY_VALUE_RE.match(first_line)
    if kv and not keys:
        keys = [kv.group(1)]
    labels = list(keys)
    if len(keys) == 2 and (fv := _FIRST_VALUE_RE.match(text)):
        labels.append(fv.group(1))  # a "Field: Owner; Value: CISO" row: the label is the first value
    lowered = text.lower() if text.isascii() else None
    blanks = _matches("blanks", _BLANK_RE, text, lowered)
    sentences = len(re.findall(r"[.!?](?:\s|$)", text))
    section = " ".join(para.heading_path)
    last_heading = para.heading_path[-1] if para.heading_path else ""
    values: dict[str, float] = {
        "bias_one": 1.0,
        "kind_paragraph": float(para.kind == "paragraph"),
        "kind_list": float(para.kind == "list"),
        "kind_table_row": float(para.kind == "table-row"),
        "kind_heading": float(para.kind == "heading"),
        "before_first_heading": float(not para.heading_path),
        "page_edge": float(para.ordinal in edges),
        "heading_depth": min(len(para.heading_path), 3) / 3,
        "log_chars": math.log1p(len(text)) / 7,
        "log_words": math.log1p(len(words)) / 5,
        # one sentence or several: a count up to five learned from the role set that long prose is a description
        "sentences": min(sentences, 2) / 2,
        "ends_period": float(stripped[-1:] in ".!?"),
        "ends_colon": float(stripped[-1:] == ":"),
        "ends_no_punct": float(stripped[-1:].isalnum()),
        "starts_enumerator": float(bool(_ENUM_RE.match(text))),
        "upper_ratio": _ratio(upper, letters),
        "title_ratio": _ratio(sum(w[0].isupper() for w in words), len(words)),
        "digit_ratio": _ratio(sum(map(str.isdigit, text)), len(text)),
        "key_value": float(bool(keys)),
        "pairs": min(len(keys), 6) / 6,
        "metadata_keys": _ratio(sum(map(_metadata_key, labels)), len(labels)),
        "metadata_key_first": float(any(map(_metadata_key, labels[:1] + labels[2:]))),
        "blanks": min(len(blanks), 5) / 5,
        "blank_share": _ratio(sum(len(b) for b in blanks), len(text)),
        "brackets": min(len(_BRACKET_RE.findall(text)), 3) / 3,
        "url_or_email": float(bool(_URL_RE.search(text))),
        "modals": min(len(_matches("modals", _MODAL_RE, text, lowered)), 4) / 4,
        "passives": min(len(_matches("passives", _PASSIVE_RE, text, lowered)), 4) / 4,
        "short_label": float(len(words) <= 8 and stripped[-1:] not in ".!?:;"),
        "page_number": float(bool(_PAGE_RE.match(text.strip()))),
    }
    for name, pattern in _CUES.items():
        values[name] = min(len(_matches(name, pattern, text, lowered)), 3) / 3
    values.update(_section_cues(last_heading, section))
    values["repeated_in_document"] = min(in_document[normalise(text)] - 1, 3) / 3
    values["repeated_across_documents"] = math.log1p(context.documents_with(text) - 1) / math.log(10)
    values["table_cells"] = min(text.count("; ") + 1, 6) / 6 if para.kind == "table-row" else 0.0
    return [values[name] for name in FEATURE_NAMES]


@lru_cache(maxsize=1024)
def _section_cues(last_heading: str, section: str) -> dict[str, float]:
    """The section-cue features of a heading path (the same for every paragraph under it: computed once)."""
    return {
        name: float(bool(pattern.search(last_heading))) + 0.5 * float(bool(pattern.search(section)))
        for name, pattern in _SECTION_CUES.items()
    }


def document_features(doc: ParsedDocument, context: RoleContext | None = None) -> list[list[float]]:
    """:func:`paragraph_features` of every paragraph of ``doc``."""
    context = context or RoleContext.from_documents([doc])
    edges = _page_edges(doc)
    in_document = Counter(normalise(p.text) for p in doc.paragraphs)
    return [paragraph_features(doc, p, context, edges=edges, in_document=in_document) for p in doc.paragraphs]


# -- rules --------------------------------------------------------------------------------------------------------
def layout_roles(doc: ParsedDocument) -> dict[int, ParagraphRole]:
    """The roles a connector set from the layout (``metadata["layout_roles"]``: ordinal → role)."""
    import json

    raw = doc.metadata.get("layout_roles")
    if not raw:
        return {}
    return {int(k): _role(v) for k, v in json.loads(raw).items()}


def certain_role(
    doc: ParsedDocument,
    para: Paragraph,
    context: RoleContext,
    *,
    edges: set[int] | None = None,
    layout: Mapping[int, ParagraphRole] | None = None,
) -> ParagraphRole | None:
    """The role structure makes certain, or None (the model decides)."""
    if para.kind == "heading":
        return "heading"
    layout = layout_roles(doc) if layout is None else layout
    if para.ordinal in layout:  # set by the connector from the layout (a page header or footer)
        return layout[para.ordinal]
    text = para.text.strip()
    if _PAGE_RE.match(text):
        return "furniture"
    if para.kind == "table-row" and _is_revision_row(text):
        return "metadata"
    edges = _page_edges(doc) if edges is None else edges
    shared = context.documents_with(text)
    if (
        context.documents >= 2
        and shared >= 2
        and shared * 2 >= context.documents
        and para.ordinal in edges
        and para.kind == "paragraph"
        and len(text.split()) <= 20
        and not _MODAL_RE.search(text)
        and not _KEY_VALUE_RE.match(text)
    ):
        return "furniture"  # the same short line at the edge of the pages of most documents of the batch
    return None


def _is_revision_row(text: str) -> bool:
    """Whether a table row is an entry of a revision history or document-control table: three or more columns,
    every column label names document metadata (:func:`_metadata_key`), one a version and one a date ("Version: 1.2;
    Date: 2025-01-20; Changed by: Platform Team; Description of change: Critical patches now deployed within 7
    days"). What the entry says changed is metadata however it is worded; a register with a "Version" column
    beside columns of its own ("Software: …; Version: …; Date: …") is not."""
    keys = [k.strip() for k in _PAIR_RE.findall(text)]
    return (
        len(keys) >= 3
        and all(map(_metadata_key, keys))
        and any(_VERSION_KEY_RE.search(k) for k in keys)
        and any(_DATE_KEY_RE.search(k) for k in keys)
    )


# -- the model ----------------------------------------------------------------------------------------------------
def _artifact_spec() -> Any:
    from compliance.artifacts import ArtifactSpec
    from compliance.errors import ModelError, ModelNotFoundError

    return ArtifactSpec(
        kind="paragraph-roles",
        format_version=1,
        description="paragraph role model",
        rebuild="train one with `compliance roles train`",
        error=ModelError,
        missing_error=ModelNotFoundError,
    )


ROLE_MODEL_SPEC = _artifact_spec()
WEIGHTS_FILE = "weights.npz"


@dataclass
class RoleModel:
    """Multinomial logistic regression over :data:`FEATURE_NAMES` (and optionally a sentence embedding).

    Attributes:
        roles: the output classes, in :data:`~compliance.connectors.document.PARAGRAPH_ROLES` order.
        feature_names: the cheap features the weights expect.
        heads: ``{"structure": {...}}`` and, when trained with an encoder, ``{"embedding": {...}}``; each head
            has ``mean``/``scale`` (feature standardisation), ``weights`` (inputs × roles) and ``bias``; the
            embedding head also ``emb_mean``/``emb_scale`` (embedding standardisation).
        encoder: what the embedding head's inputs come from (``"all-MiniLM-L6-v2"``), or None.
        meta: training parameters and evaluation figures (written to config.json).
    """

    roles: tuple[str, ...]
    feature_names: tuple[str, ...]
    heads: dict[str, dict[str, np.ndarray]]
    encoder: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def has_embedding_head(self) -> bool:
        return "embedding" in self.heads

    def predict_proba(self, features: np.ndarray, embeddings: np.ndarray | None = None) -> np.ndarray:
        """Class probabilities (rows × roles): the embedding head when ``embeddings`` are given and the model
        has one, else the structure head."""
        import numpy as np

        use_embedding = embeddings is not None and self.has_embedding_head
        head = self.heads["embedding" if use_embedding else "structure"]
        x = (np.asarray(features, dtype=np.float64) - head["mean"]) / head["scale"]
        if use_embedding:
            assert embeddings is not None
            e = np.asarray(embeddings, dtype=np.float64)
            if "emb_mean" in head:
                e = (e - head["emb_mean"]) / head["emb_scale"]
            x = np.hstack([x, e])
        logits = x @ head["weights"] + head["bias"]
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return np.asarray(p / p.sum(axis=1, keepdims=True))

    def save(self, path: str | Path, *, card: str | None = None) -> Path:
        """Write the model directory (config.json, weights.npz, MODEL_CARD.md)."""
        import numpy as np

        from compliance.artifacts import file_sha256, write_card, write_config

        directory = Path(path)
        directory.mkdir(parents=True, exist_ok=True)
        arrays = {f"{name}.{key}": value for name, head in self.heads.items() for key, value in head.items()}
        np.savez_compressed(directory / WEIGHTS_FILE, **arrays)  # type: ignore[arg-type]
        write_config(
            directory,
            ROLE_MODEL_SPEC,
            {
                "roles": list(self.roles),
                "feature_names": list(self.feature_names),
                "heads": sorted(self.heads),
                "encoder": self.encoder,
                **{k: v for k, v in self.meta.items() if k != "provenance"},
            },
            provenance={
                **self.meta.get("provenance", {}),
                "weights_sha256": file_sha256(directory / WEIGHTS_FILE),
            },
        )
        if card is not None:
            write_card(directory, card)
        return directory

    @classmethod
    def load(cls, path: str | Path) -> RoleModel:
        """Read a model directory written by :meth:`save`.

        Raises:
            ModelNotFoundError: no model there.
            ModelError: unreadable, or trained on other features than this version computes.
        """
        import numpy as np

        from compliance.artifacts import read_config
        from compliance.errors import ModelError

        directory = Path(path)
        cfg = read_config(directory, ROLE_MODEL_SPEC)
        if tuple(cfg.get("feature_names", ())) != FEATURE_NAMES:
            raise ModelError(
                f"{directory}: the paragraph role model was trained on other features than this version "
                "computes; train it again with `compliance roles train`"
            )
        heads: dict[str, dict[str, np.ndarray]] = {}
        try:
            with np.load(directory / WEIGHTS_FILE) as data:
                for key in data.files:
                    head, _, part = key.partition(".")
                    heads.setdefault(head, {})[part] = np.asarray(data[key], dtype=np.float64)
        except (OSError, ValueError) as e:
            raise ModelError(f"{directory}: cannot read {WEIGHTS_FILE} ({e}); train the model again") from e
        meta = {k: v for k, v in cfg.items() if k not in ("roles", "feature_names", "heads", "encoder")}
        return cls(tuple(cfg["roles"]), FEATURE_NAMES, heads, cfg.get("encoder"), meta)


def packaged_role_model_dir() -> Path:
    """The role model shipped with the package (``compliance/connectors/role_model``)."""
    from importlib.resources import as_file, files

    with as_file(files("compliance.connectors") / "role_model") as path:
        return Path(path)


def user_role_model_dir() -> Path:
    """``<model dir>/paragraph-roles``: where ``compliance roles train`` writes by default."""
    from compliance.settings import get_settings

    return get_settings().resolved_model_dir / "paragraph-roles"


@lru_cache(maxsize=4)
def _load_cached(path: str, mtime_ns: int) -> RoleModel:
    return RoleModel.load(path)


def default_role_model() -> RoleModel:
    """The role model in use: the one ``compliance roles train`` wrote to the model directory, else the one
    shipped with the package (loaded once per process and file version).

    Raises:
        ModelNotFoundError: neither exists.
    """
    from compliance.artifacts import CONFIG_FILE
    from compliance.errors import ModelNotFoundError

    user = user_role_model_dir()
    path = user if (user / CONFIG_FILE).is_file() else packaged_role_model_dir()
    if not (path / CONFIG_FILE).is_file():
        raise ModelNotFoundError(
            f"no paragraph role model at {path}; train one with `compliance roles train`"
        )
    return _load_cached(str(path), (path / CONFIG_FILE).stat().st_mtime_ns)


# -- assignment ---------------------------------------------------------------------------------------------------
def assign_roles(
    docs: Sequence[ParsedDocument],
    *,
    model: RoleModel | None = None,
    embed: Embedder | None = None,
    context: RoleContext | None = None,
) -> list[ParsedDocument]:
    """Give every paragraph of ``docs`` its role: :func:`certain_role` first, then the model.

    Args:
        docs: parsed documents of one batch (repetition across them counts).
        model: the role model (default :func:`default_role_model`).
        embed: sentence embeddings for the model's embedding head (None: the structure head).
        context: repetition counts (default: counted over ``docs``).

    Returns:
        The documents with every paragraph's ``role`` set; the roles a connector set from the layout are kept,
        any other role is decided again. Without a usable role model (none trained and none shipped, or one
        trained on other features: a warning is logged), only the certain roles are set and the others stay
        None.
    """
    import numpy as np

    from compliance.errors import ModelError

    if model is None:
        try:
            model = default_role_model()
        except ModelError as e:  # none, or one this version cannot use: the certain roles only
            logger.warning("paragraph roles from the structural rules only: %s", e)
            model = None
    context = context or RoleContext.from_documents(docs)
    out: list[ParsedDocument] = []
    for doc in docs:
        if not doc.paragraphs:
            out.append(doc)
            continue
        edges = _page_edges(doc)
        layout = layout_roles(doc)
        fixed = [certain_role(doc, p, context, edges=edges, layout=layout) for p in doc.paragraphs]
        todo = [i for i, role in enumerate(fixed) if role is None]
        roles: list[ParagraphRole | None] = list(fixed)
        if todo and model is not None:
            features = np.asarray(document_features(doc, context))[todo]
            embeddings = None
            if embed is not None and model.has_embedding_head:
                embeddings = np.asarray(embed([doc.paragraphs[i].text for i in todo]))
            proba = model.predict_proba(features, embeddings)
            for i, row in zip(todo, proba, strict=True):
                role = _role(model.roles[int(row.argmax())])
                roles[i] = "statement" if role == "form" and is_lead_in(doc.paragraphs[i].text) else role
            for i in _duty_list_items(doc, roles, todo):
                roles[i] = "statement"
        paragraphs = tuple(replace(p, role=r) for p, r in zip(doc.paragraphs, roles, strict=True))
        meta = dict(doc.metadata)
        if model is None:
            meta["role_model"] = "none"
        else:
            meta["role_model"] = (
                "embedding" if embed is not None and model.has_embedding_head else "structure"
            )
        out.append(replace(doc, paragraphs=paragraphs, metadata=meta))
    return out


_LEAD_IN_WORD_RE = re.compile(r"[A-Za-z]{2,}")


def is_lead_in(text: str) -> bool:
    """Whether ``text`` is a sentence that introduces a list ("… the Supplier undertakes the following:", "Members
    of staff must ensure that:"), not a form field: it ends in a colon, has at least eight words, no earlier line
    ends in a colon (a column of labels such as "Name:\nTitle:" is a form) and it holds no blank or placeholder
    to fill in. The role model reads a closing colon as a form's label; a lead-in is a statement (the role set's
    convention), so a paragraph the model calls a form is a statement when it is a lead-in."""
    return (
        introduces_list(text)
        and len(_LEAD_IN_WORD_RE.findall(text)) >= 8
        and _BLANK_RE.search(text) is None
        and _BRACKET_RE.search(text) is None
    )


def _duty_list_items(
    doc: ParsedDocument, roles: Sequence[ParagraphRole | None], decided: Collection[int]
) -> list[int]:
    """Indexes (among ``decided``, the paragraphs the model gave a role) of the items the model read as a
    description or a reference although the lead-in of their list states a duty ("Supplier undertakes the
    following as Processor:", "Members of staff who handle customer records must ensure that:"): an item of such
    a list is one of the duties, whatever cue words it holds ("… as set forth under Section A(j)", "… further
    specified in Exhibit 1")."""
    from types import SimpleNamespace

    paragraphs = [
        SimpleNamespace(
            id=i, ordinal=p.ordinal, text=p.text, kind=p.kind, heading_path=p.heading_path, role=r
        )
        for i, (p, r) in enumerate(zip(doc.paragraphs, roles, strict=True))
    ]
    contexts = lead_in_contexts(paragraphs)
    return [
        i
        for i in decided
        if roles[i] in ("description", "reference") and i in contexts and _MODAL_RE.search(contexts[i])
    ]


def _role(name: str) -> ParagraphRole:
    if name not in PARAGRAPH_ROLES:
        raise ValueError(f"unknown paragraph role {name!r}")
    return name  # type: ignore[return-value]


def role_counts(paragraphs: Iterable[Paragraph | Any]) -> dict[str, int]:
    """How many paragraphs have each role (``"unassigned"`` for those without one), in role order."""
    counts = Counter(getattr(p, "role", None) or "unassigned" for p in paragraphs)
    order = [*PARAGRAPH_ROLES, "unassigned"]
    return {r: counts[r] for r in order if counts[r]}
