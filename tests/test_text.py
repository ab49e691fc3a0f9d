"""The shared text helpers (compliance.text): one cleaner, one snippet, one word-window splitter, and the
passage and block splitters built on them, each checked against what its callers did before sharing it."""

from __future__ import annotations

import random

import pytest

from compliance.text import clean_text, merge_blocks, snippet, split_passages, word_windows


def test_snippet_collapses_whitespace_and_cuts_with_an_ellipsis() -> None:
    assert snippet("  a\n b\t c ", 10) == "a b c"
    assert snippet("one two three four", 9) == "one two…"  # cut at 8 characters, trailing space dropped
    assert snippet("abcdefghij", 10) == "abcdefghij"
    assert snippet("abcdefghijk", 10) == "abcdefghi…"
    rng = random.Random(1)
    for _ in range(200):
        text = " ".join("x" * rng.randint(1, 6) for _ in range(rng.randint(0, 30)))
        n = rng.randint(2, 40)
        cut = snippet(text, n)
        assert len(cut) <= n and (cut == text or (cut.endswith("…") and text.startswith(cut[:-1])))


def test_clean_text_document_mode_drops_invisible_characters_and_empty_lines() -> None:
    assert clean_text("  a\u00a0 b\u200b c\x07 \r\n\r\n  d  ") == "a b c\nd"
    assert clean_text("pro\u00adcessing ▼M2 data") == "processing ▼M2 data"  # markers only matter in law text


def test_clean_text_legal_mode_strips_consolidation_markers_and_keeps_blocks() -> None:
    text = "▼M2\n1.  Member States shall ►M3 ensure ◄ that\t data\n\n\n2. Paragraph two  \n"
    assert clean_text(text, legal=True) == "1. Member States shall ensure that data\n\n\n2. Paragraph two"
    assert merge_blocks(clean_text(text, legal=True), 2, 10) == [
        "1. Member States shall ensure that data",
        "2. Paragraph two",
    ]


def _alert_windows(tokens: list[str], words: int) -> list[list[str]]:
    """How the alert run cut articles before the splitter was shared (windows of ``words``, a fifth overlapping)."""
    step = max(1, words - words // 5)
    return [tokens[s : s + words] for s in range(0, max(1, len(tokens) - words // 5), step)]


@pytest.mark.parametrize("size", [1, 2, 5, 7, 20, 120])
def test_word_windows_match_the_alert_runs_former_cut(size: int) -> None:
    for n in range(1, 3 * size + 8):
        tokens = [f"w{i}" for i in range(n)]
        windows = word_windows(tokens, size, size // 5)
        assert windows == _alert_windows(tokens, size), (size, n)
        assert windows[-1][-1] == tokens[-1]  # the last word is always covered
        assert all(len(w) <= size for w in windows)


def test_word_windows_overlap_and_bounds() -> None:
    words = [str(i) for i in range(10)]
    assert word_windows(words, 4, 1) == [["0", "1", "2", "3"], ["3", "4", "5", "6"], ["6", "7", "8", "9"]]
    assert word_windows(words[:3], 4, 1) == [["0", "1", "2"]]
    assert word_windows([], 4, 1) == [[]]
    for size, overlap in ((0, 0), (3, 3), (3, -1)):
        with pytest.raises(ValueError, match="word windows"):
            word_windows(words, size, overlap)


def test_split_passages_packs_paragraphs_and_windows_long_ones() -> None:
    text = "alpha beta\n\ngamma delta\n\n" + " ".join(f"w{i}" for i in range(10))
    assert split_passages(text, size=4, overlap=1) == [
        "alpha beta gamma delta",
        "w0 w1 w2 w3",
        "w3 w4 w5 w6",
        "w6 w7 w8 w9",
    ]
    assert split_passages("") == [""]


def test_merge_blocks_merges_short_blocks_caps_long_ones_and_folds_a_short_tail() -> None:
    text = "a b\n\nc d e\n\n" + " ".join(["f"] * 12) + "\n\ng"
    assert merge_blocks(text, min_words=4, max_words=6) == ["a b c d e", "f f f f f f g"]
    assert merge_blocks("x y z", min_words=4, max_words=6) == ["x y z"]
