"""Graded passage pairs from the law corpus, for fine-tuning the link-decision bi-encoder (seed 002).

Seed 002 (JurisBERT) grades pairs of legal texts by how far apart they sit in a hierarchy: same discussion = 3,
same theme = 2, same field = 1, otherwise 0. The law corpus has the same shape, so we grade pairs of passages:

=====  ==========================================================
grade  relation
=====  ==========================================================
3      two passages (paragraphs) of the same article
2      passages of different articles in the same chapter
1      passages of different chapters of the same law
0      passages of different laws
=====  ==========================================================

Two passages of different articles of a law whose chapters are unknown (the EU JSON acts carry none) are not
graded: they might share a chapter (2) or not (1), and a wrong label teaches the wrong thing.

The similarity target is ``grade / 3``. Passages are an article's numbered paragraphs when the parser produced
them, else blank-line separated blocks of the article text merged to at least ``min_words`` words. Recitals are not
used. The train/held-out split is by *article* (hash of law + article key), so no held-out passage is seen in
training.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from compliance.rules.corpus import Law
from compliance.text import clean_text, merge_blocks

__all__ = [
    "GRADE_SCHEME",
    "GradedPair",
    "PairSet",
    "Passage",
    "law_passages",
    "make_graded_pairs",
]

#: Human-readable description stored in every decision artifact.
GRADE_SCHEME: dict[str, Any] = {
    "3": "same article",
    "2": "same chapter, different article",
    "1": "same law, different chapter (pairs with an unknown chapter are not used)",
    "0": "different law",
    "target": "grade / 3",
}

Split = Literal["train", "heldout"]


@dataclass(frozen=True, slots=True)
class Passage:
    """One unit of text with its place in the hierarchy."""

    law: str
    chapter: str | None
    article: str
    key: str
    text: str


@dataclass(frozen=True, slots=True)
class GradedPair:
    """Two passages and their graded relation (0..3)."""

    a: Passage
    b: Passage
    grade: int

    @property
    def target(self) -> float:
        """Similarity target in [0, 1]."""
        return self.grade / 3.0


@dataclass(frozen=True, slots=True)
class PairSet:
    """Graded pairs for training and held-out evaluation, with provenance."""

    train: tuple[GradedPair, ...]
    heldout: tuple[GradedPair, ...]
    provenance: dict[str, Any]

    def counts(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for name, pairs in (("train", self.train), ("heldout", self.heldout)):
            per: dict[str, int] = defaultdict(int)
            for p in pairs:
                per[str(p.grade)] += 1
            out[name] = dict(sorted(per.items()))
        return out


def law_passages(law: Law, *, min_words: int = 25, max_words: int = 160) -> list[Passage]:
    """The passages of a law's articles, with their chapter and article.

    Args:
        law: a parsed law.
        min_words: passages shorter than this are merged with the next block (fallback splitting) or dropped.
        max_words: longer passages are truncated to this many words.
    """
    passages: list[Passage] = []
    for article in law.articles:
        chapter = law.chapter_of(article.key)
        chapter_key = chapter.key if chapter is not None else None
        paragraphs = [c for c in law.children(article.key) if c.kind == "paragraph" and c.text.strip()]
        if paragraphs:
            units = [(p.key, clean_text(p.text, legal=True)) for p in paragraphs]
        else:
            text = clean_text(law.text_of(article.key), legal=True)
            units = [
                (f"{article.key}/blk:{i + 1}", b)
                for i, b in enumerate(merge_blocks(text, min_words, max_words))
            ]
        for key, text in units:
            words = text.split()
            if len(words) < min_words // 2:
                continue
            passages.append(
                Passage(law.short_name, chapter_key, article.key, key, " ".join(words[:max_words]))
            )
    return passages


def _split_of(passage: Passage, heldout_fraction: float, seed: int) -> Split:
    digest = hashlib.sha256(f"{seed}|{passage.law}|{passage.article}".encode()).digest()
    return "heldout" if int.from_bytes(digest[:4], "big") / 2**32 < heldout_fraction else "train"


def grade_of(a: Passage, b: Passage) -> int | None:
    """The graded relation of two passages (see the module docstring); None when it is unknown."""
    if a.law != b.law:
        return 0
    if a.article == b.article:
        return 3
    if a.chapter is None or b.chapter is None:
        return None
    return 2 if a.chapter == b.chapter else 1


def _sample(passages: Sequence[Passage], per_grade: int, rng: random.Random) -> list[GradedPair]:
    """About ``per_grade`` pairs of each grade, drawn without repeats."""
    by_article: dict[tuple[str, str], list[Passage]] = defaultdict(list)
    by_chapter: dict[tuple[str, str], list[Passage]] = defaultdict(list)
    by_law: dict[str, list[Passage]] = defaultdict(list)
    for p in passages:
        by_article[(p.law, p.article)].append(p)
        if p.chapter is not None:
            by_chapter[(p.law, p.chapter)].append(p)
        by_law[p.law].append(p)
    pairs: list[GradedPair] = []
    seen: set[tuple[str, str, str, str]] = set()

    def add(a: Passage, b: Passage, want: int) -> bool:
        key = (
            (a.law, a.key, b.law, b.key) if (a.law, a.key) < (b.law, b.key) else (b.law, b.key, a.law, a.key)
        )
        if (a.key == b.key and a.law == b.law) or key in seen or grade_of(a, b) != want:
            return False
        seen.add(key)
        pairs.append(GradedPair(a, b, want))
        return True

    pools: dict[int, list[list[Passage]]] = {
        3: [g for g in by_article.values() if len(g) >= 2],
        2: [g for g in by_chapter.values() if len({p.article for p in g}) >= 2],
        1: [g for g in by_law.values() if len({p.chapter for p in g if p.chapter is not None}) >= 2],
    }
    for grade in (3, 2, 1):
        groups = pools[grade]
        if not groups:
            continue
        made, tries = 0, 0
        while made < per_grade and tries < per_grade * 30:
            tries += 1
            group = rng.choice(groups)
            if grade == 1:
                group = [p for p in group if p.chapter is not None]
            a, b = rng.sample(group, 2)
            made += add(a, b, grade)
    laws = [g for g in by_law.values() if g]
    if len(laws) >= 2:
        made, tries = 0, 0
        while made < per_grade and tries < per_grade * 30:
            tries += 1
            la, lb = rng.sample(laws, 2)
            made += add(rng.choice(la), rng.choice(lb), 0)
    rng.shuffle(pairs)
    return pairs


def make_graded_pairs(
    laws: Iterable[Law],
    *,
    train_per_grade: int = 300,
    heldout_per_grade: int = 150,
    heldout_fraction: float = 0.2,
    seed: int = 13,
    min_words: int = 25,
    max_words: int = 160,
) -> PairSet:
    """Graded train and held-out pairs from laws, split by article.

    Args:
        laws: the corpus (at least two laws for grade-0 pairs).
        train_per_grade: pairs per grade in the training set (fewer where the corpus has fewer).
        heldout_per_grade: pairs per grade in the held-out set.
        heldout_fraction: share of articles whose passages are held out.
        seed: sampling and split seed.
        min_words: see :func:`law_passages`.
        max_words: see :func:`law_passages`.
    """
    laws = list(laws)
    passages = [p for law in laws for p in law_passages(law, min_words=min_words, max_words=max_words)]
    train = [p for p in passages if _split_of(p, heldout_fraction, seed) == "train"]
    held = [p for p in passages if _split_of(p, heldout_fraction, seed) == "heldout"]
    rng = random.Random(seed)
    provenance = {
        "laws": [
            {
                "short_name": law.short_name,
                "identifier": law.identifier,
                "checksum": law.checksum,
                "source_format": law.source_format,
            }
            for law in laws
        ],
        "passages": {"train": len(train), "heldout": len(held)},
        "split": f"by article, {heldout_fraction:.0%} held out (seed {seed})",
        "params": {
            "train_per_grade": train_per_grade,
            "heldout_per_grade": heldout_per_grade,
            "min_words": min_words,
            "max_words": max_words,
            "seed": seed,
        },
    }
    pair_set = PairSet(
        tuple(_sample(train, train_per_grade, rng)), tuple(_sample(held, heldout_per_grade, rng)), provenance
    )
    provenance["pairs"] = pair_set.counts()
    return pair_set


def pair_to_dict(pair: GradedPair) -> dict[str, Any]:
    """JSON-serialisable form (used to write pair files for inspection)."""
    return {"a": asdict(pair.a), "b": asdict(pair.b), "grade": pair.grade}
