"""Law provisions as passages at their finest level: an article's numbered paragraphs and points.

Used by the alert engine (an alert names ``art:21/par:2/pt:j``) and by the provision picker of GDPR links
(:mod:`compliance.linking.provisions`: Art. 32(1)(a) within the classifier's Art. 32).
"""

from __future__ import annotations

from collections.abc import Sequence

from compliance.rules.corpus import Law
from compliance.text import clean_text, word_windows

__all__ = ["provision_passages", "windows_of"]


def windows_of(text: str, owner: str, words: int, texts: list[str], owners: list[str]) -> None:
    """Append word windows of ``text`` (``words`` words, overlapping by a fifth) owned by ``owner``."""
    tokens = clean_text(text, legal=True).split()
    if not tokens:
        return
    for window in word_windows(tokens, words, words // 5):
        texts.append(" ".join(window))
        owners.append(owner)


def _lead(text: str, first_child: str) -> str:
    """The text of a paragraph before its first point (the points' text is part of the paragraph's)."""
    cut = text.find(first_child) if first_child else -1
    lead = text[:cut] if cut > 0 else text.split("\n", 1)[0]
    return lead.rstrip().removesuffix("(").rstrip()


def _first_words(text: str, n: int) -> str:
    tokens = text.split()
    return " ".join(tokens[:n]) + (" …" if len(tokens) > n else "")


def provision_passages(
    law: Law, keys: Sequence[str], words: int, *, lead_words: int = 0
) -> tuple[list[str], list[str]]:
    """Passages at the finest level of each queried provision, with the key that owns each.

    An article's numbered paragraphs and points (``art:21/par:2/pt:j``) are passages of their own, each prefixed
    with the article title; a paragraph's text before its points (``The measures … shall include at least the
    following:``) is a passage of the paragraph. Text that has no finer structure (an article without numbered
    paragraphs, a recital) is cut into word windows (:func:`windows_of`). ``lead_words`` > 0 puts the first
    ``lead_words`` words of the text that introduces a point (``The measures … shall include …``) before it, so
    a short point (``incident handling;``) keeps its context; points of points are passages too.
    """
    texts: list[str] = []
    owners: list[str] = []

    def add_points(parent_key: str, title: str, lead: str) -> None:
        context = f"{_first_words(lead, lead_words)} " if lead_words > 0 and lead else ""
        for point in law.children(parent_key):
            if point.kind != "point":
                continue
            body = point.text or law.text_of(point.key)
            windows_of(f"{title}\n{context}{body}", point.key, words, texts, owners)
            if any(c.kind == "point" for c in law.children(point.key)):
                add_points(point.key, title, body)

    for key in keys:
        prov = law.get(key)
        title = prov.title or ""
        children = law.children(key)
        if prov.kind != "article" or not children:
            windows_of(f"{title}\n{law.text_of(key)}", key, words, texts, owners)
            continue
        first_point = next((c for c in children if c.kind == "point"), None)
        lead = _lead(prov.text, first_point.text if first_point else "") if prov.text else ""
        if lead:  # the article's own text: a lead before paragraphs, or the lead of direct points
            windows_of(f"{title}\n{lead}", key, words, texts, owners)
        if first_point is not None:
            add_points(key, title, lead)
        for par in children:
            if par.kind != "paragraph":
                continue
            points = [c for c in law.children(par.key) if c.kind == "point"]
            if not points:
                windows_of(f"{title}\n{par.text}", par.key, words, texts, owners)
                continue
            par_lead = _lead(par.text, points[0].text)
            windows_of(f"{title}\n{par_lead}", par.key, words, texts, owners)
            add_points(par.key, title, par_lead)
    return texts, owners
