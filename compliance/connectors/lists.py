"""Lists in a parsed document: the sentence that introduces a list, and the items it introduces.

A policy or a contract often states the duty once and lists what it covers: "Notwithstanding any obligations of
Company as Controller …, Supplier undertakes the following as Processor:" then "(a) to process any Personal Data
only on … Company's documented instructions …", "(d) to keep Personal Data strictly confidential …". Read alone,
an item has lost who is bound and in which capacity. Two steps use the lead-in:

* paragraph roles (:func:`compliance.connectors.roles.assign_roles`): an item of a list whose lead-in states a duty
  is a statement, whatever cue words it holds ("… as set forth under Section A(j)", "… specified in Exhibit 1");
* the audit (:mod:`compliance.app.audit`): each item is classified with the lead-in's last sentence before it
  (:func:`lead_in_contexts`, :func:`read_with`) — the shipped classifier put "(j) to make available to Company all
  information necessary to demonstrate compliance … and to allow for … audits" on Art. 5(2) alone and on Art.
  28(3)(h) after its lead-in. The stored paragraph, its vectors for the controls index and its provision target's
  BM25 stay the item's own, and each link says what it was read with (``evidence.read_with``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "MAX_CONTEXT_WORDS",
    "MIN_CONTEXT_WORDS",
    "introduces_list",
    "is_list_item",
    "lead_in_contexts",
    "lead_in_sentence",
    "read_with",
]

#: at most this many words of a lead-in are read before an item (its end: "… undertakes the following:")
MAX_CONTEXT_WORDS = 40
#: a lead-in sentence shorter than this says nothing the item does not ("Staff must:") and is not read
MIN_CONTEXT_WORDS = 6

# "(a) …", "a) …", "(iv) …", "1. …", "1) …", "2.3 …", "- …", "• …", "* …", "– …"
_ENUMERATED = re.compile(
    r"^\s*(?:\(?(?:[a-z]|[ivx]{1,4}|\d{1,2})\)|\d{1,2}(?:\.\d{1,2})*\.?|[-•*\u2013\u25aa])\s"
)
# an item's enumerator: "(b)", "b)", "(3)", "3)", "3." (roman numerals are read as letters only when single)
_LABEL = re.compile(r"^\s*(\(?)([a-z]|\d{1,2})([.)])\s")
#: at most this many paragraphs may come between two items of one list (an item's further paragraphs)
_MAX_HELD = 3
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
# roles of a paragraph that can introduce a list of duties (None: stored before roles existed)
_LEAD_ROLES = {"statement", "definition", None}


def is_list_item(kind: str | None, text: str) -> bool:
    """Whether a paragraph is an item of a list: a list paragraph, or one that starts with an enumerator."""
    return kind == "list" or _ENUMERATED.match(text) is not None


def introduces_list(text: str) -> bool:
    """Whether ``text`` ends the way a lead-in does: in a colon, with no earlier line ending in one (a column of
    "Name:" / "Title:" labels is a form, not a lead-in)."""
    t = text.strip()
    return t.endswith(":") and ":\n" not in t


def lead_in_sentence(text: str) -> str | None:
    """The sentence of ``text`` that introduces a list — its last, when the paragraph ends in a colon — cut to its
    last :data:`MAX_CONTEXT_WORDS` words; None when ``text`` introduces no list or the sentence has fewer than
    :data:`MIN_CONTEXT_WORDS` words."""
    if not introduces_list(text):
        return None
    last = _SENTENCE_END.split(text.strip())[-1]
    words = last.split()
    if len(words) < MIN_CONTEXT_WORDS:  # "Staff must:", "policy requires that:" add nothing an item lacks
        return None
    return " ".join(words[-MAX_CONTEXT_WORDS:])


def _enumerator(text: str) -> tuple[str, int] | None:
    """The style and value of an item's enumerator: ``(b)`` → ("(x)", 2), ``3.`` → ("1.", 3); None for bullets and
    paragraphs without one."""
    m = _LABEL.match(text)
    if m is None:
        return None
    open_, value, close = m.group(1), m.group(2), m.group(3)
    number = int(value) if value.isdigit() else ord(value) - ord("a") + 1 if len(value) == 1 else None
    if number is None:
        return None
    return f"{open_}{'1' if value.isdigit() else 'a'}{close}", number


def lead_in_contexts(paragraphs: Iterable[Any]) -> dict[int, str]:
    """Paragraph id → the lead-in sentence of the list it is an item of, for the paragraphs of one document.

    ``paragraphs`` are stored paragraphs (``id``, ``ordinal``, ``text``, ``kind``, ``heading_path``, ``role``). An
    item belongs to the closest lead-in before it under the same heading. A paragraph that is not an item ends the
    list, unless the next item continues the list's enumeration ("(e) …", a second paragraph of it, "(f) …"): the
    paragraphs in between are then read with the lead-in too. An item that ends in a colon introduces the items
    after it.
    """
    out: dict[int, str] = {}
    lead: tuple[str, Sequence[str]] | None = None  # (sentence, heading path)
    last: tuple[str, int] | None = None  # the enumerator of the list's last item
    held: list[int] = []  # paragraphs after the last item, waiting to see whether the list goes on
    for p in sorted(paragraphs, key=lambda p: p.ordinal):
        path = tuple(p.heading_path or ())
        item = is_list_item(p.kind, p.text)
        if lead is not None and path != lead[1]:
            lead, last, held = None, None, []
        if lead is not None:
            label = _enumerator(p.text) if item else None
            if item and held and (label is None or last is None or label != (last[0], last[1] + 1)):
                lead, last, held = None, None, []  # items, but not the same list's: it ended before them
            elif item:
                for pid in held:
                    out[pid] = lead[0]
                held = []
                out[int(p.id)] = lead[0]
                last = label or last
            elif last is not None and len(held) < _MAX_HELD:
                held.append(int(p.id))
            else:
                lead, last, held = None, None, []
        sentence = lead_in_sentence(p.text) if p.role in _LEAD_ROLES else None
        if sentence is not None:
            lead, last, held = (sentence, path), None, []
    return out


def read_with(context: str, text: str) -> str:
    """The text the classifier reads for an item: its lead-in sentence, then the item."""
    return f"{context} {text}"
