"""Assembly rules shared by every connector: lead-ins, splitting, merging, offsets, config."""

from __future__ import annotations

import json

import pytest

from compliance.connectors import ParsedDocument, SplitConfig, count_tokens
from compliance.connectors.assemble import Block, assemble, table_blocks
from compliance.errors import ConfigurationError
from compliance.text import clean_text
from tests.fixtures.connectors import builders as b


def _doc(blocks: list[Block], config: SplitConfig | None = None) -> ParsedDocument:
    return assemble(
        blocks, data=b"x", source="mem.txt", media_type="text/plain", config=config or SplitConfig()
    )


def test_count_tokens_words_and_punctuation() -> None:
    assert count_tokens("") == 0
    assert count_tokens("   ") == 0
    assert (
        count_tokens("The controller's duty, e-mail included.") == 7
    )  # The controller's duty , e-mail included .
    assert count_tokens("Art. 5(1)(f)") == 9


def test_split_config_validation_and_round_trip() -> None:
    cfg = SplitConfig(max_tokens=120, min_chars=10)
    assert SplitConfig.from_dict(json.loads(cfg.to_json())) == cfg
    with pytest.raises(ConfigurationError):
        SplitConfig(max_tokens=2)
    with pytest.raises(ConfigurationError):
        SplitConfig(max_pages=0)
    with pytest.raises(ConfigurationError, match="unknown"):
        SplitConfig.from_dict({"max_tokenz": 3})
    with pytest.raises(AttributeError):
        cfg.max_tokens = 5  # type: ignore[misc]


def test_clean_text() -> None:
    assert clean_text("  a\u00a0 b\u200b c\x07 \r\n\r\n  d  ") == "a b c\nd"


def test_heading_levels_pop_correctly() -> None:
    doc = _doc(
        [
            Block("heading", "A", level=1),
            Block("heading", "A.1", level=2),
            Block("heading", "A.1.a", level=3),
            Block("paragraph", "Deep paragraph under three headings of the document."),
            Block("heading", "A.2", level=2),
            Block("paragraph", "Second paragraph under the second sub-heading here."),
            Block("heading", "Title", level=0),
            Block("paragraph", "After a title the path starts again from the top."),
        ]
    )
    assert [p.heading_path for p in doc.paragraphs] == [("A", "A.1", "A.1.a"), ("A", "A.2"), ()]


def test_lead_in_only_when_it_ends_with_colon() -> None:
    doc = _doc(
        [
            Block("paragraph", "The following measures apply to every system in scope."),
            Block("list-item", "encryption", marker="1."),
            Block("list-item", "logging", marker="2."),
            Block("paragraph", "Each owner must ensure:"),
            Block("list-item", "reviews happen", level=0),
            Block("list-item", "quarterly", level=1),
        ]
    )
    b.check_invariants(doc)
    assert [p.kind for p in doc.paragraphs] == ["paragraph", "list", "list"]
    assert doc.paragraphs[1].text == "1. encryption\n2. logging"
    assert doc.paragraphs[2].text == "Each owner must ensure:\n- reviews happen\n  - quarterly"


def test_a_numbered_list_of_duties_reads_as_its_lettered_paragraphs() -> None:
    """Word's numbered list of whole-sentence duties under a lead-in ("The policy requires that:" then "(a) …",
    "(b) …") is the lead-in and one paragraph per item, as the same duties typed in as lettered paragraphs read; a
    bullet under an item, indented (Word) or not (a PDF keeps no indentation), stays with its item. Items that are
    fragments, or one that is not a sentence, keep the list one paragraph with its lead-in."""
    lead = Block("paragraph", "The policy requires that:")
    duties = [
        lead,
        Block("list-item", "Users must not log in directly to systems as a privileged user.", marker="(a)"),
        Block("list-item", "A privileged user holds administrative rights on critical systems.", level=1),
        Block("list-item", "Privileged access must only be gained through the access proxy.", marker="(b)"),
        Block("list-item", "Direct administrative access to production is kept to a minimum.", marker="(c)"),
    ]
    doc = _doc(duties)
    b.check_invariants(doc)
    assert [(p.kind, p.text) for p in doc.paragraphs] == [
        ("paragraph", "The policy requires that:"),
        (
            "list",
            "(a) Users must not log in directly to systems as a privileged user.\n"
            "  - A privileged user holds administrative rights on critical systems.",
        ),
        ("paragraph", "(b) Privileged access must only be gained through the access proxy."),
        ("paragraph", "(c) Direct administrative access to production is kept to a minimum."),
    ]
    flat = _doc([duties[0], duties[1], Block("list-item", duties[2].text, marker="-"), *duties[3:]])
    assert [p.text for p in flat.paragraphs][1] == (
        "(a) Users must not log in directly to systems as a privileged user.\n"
        "- A privileged user holds administrative rights on critical systems."
    )
    assert len(flat.paragraphs) == 4
    fragments = _doc(
        [lead, Block("list-item", "encryption", marker="(a)"), Block("list-item", "logging", marker="(b)")]
    )
    assert [p.text for p in fragments.paragraphs] == [
        "The policy requires that:\n(a) encryption\n(b) logging"
    ]
    unfinished = _doc(
        [*duties[:2], Block("list-item", "Privileged access is gained through the proxy", marker="(b)")]
    )
    assert len(unfinished.paragraphs) == 1 and unfinished.paragraphs[0].kind == "list"


def test_lead_in_not_joined_across_a_heading() -> None:
    doc = _doc(
        [
            Block("paragraph", "The last sentence of section one reads:"),
            Block("heading", "Two", level=1),
            Block("list-item", "an item under section two"),
        ]
    )
    assert [p.kind for p in doc.paragraphs] == ["paragraph", "list"]
    assert doc.paragraphs[1].heading_path == ("Two",)


def test_long_paragraph_split_into_sentences_within_budget() -> None:
    sentences = [f"Sentence number {i} says that the controller keeps a record." for i in range(40)]
    doc = _doc([Block("paragraph", " ".join(sentences))], SplitConfig(max_tokens=50))
    b.check_invariants(doc, max_tokens=50)
    assert len(doc.paragraphs) > 5
    rebuilt = " ".join(p.text for p in doc.paragraphs)
    assert rebuilt == " ".join(sentences)
    assert all(p.text.endswith("record.") for p in doc.paragraphs)


def test_over_long_sentence_split_between_words() -> None:
    words = " ".join(f"word{i}" for i in range(130))
    doc = _doc([Block("paragraph", words)], SplitConfig(max_tokens=50))
    b.check_invariants(doc, max_tokens=50)
    assert [count_tokens(p.text) for p in doc.paragraphs] == [50, 50, 30]


def test_long_table_row_split_at_cells() -> None:
    cells = "; ".join(f"Column {i}: value number {i} of the row" for i in range(20))
    doc = _doc([Block("table-row", cells)], SplitConfig(max_tokens=40))
    b.check_invariants(doc, max_tokens=40)
    assert all(p.kind == "table-row" for p in doc.paragraphs)
    assert all(p.text.startswith("Column") for p in doc.paragraphs)


def test_short_fragments_merge_within_section_only() -> None:
    doc = _doc(
        [
            Block("heading", "One", level=1),
            Block("paragraph", "Version 2."),
            Block("paragraph", "This paragraph is long enough to stand on its own in the index."),
            Block("heading", "Two", level=1),
            Block("paragraph", "Short."),
            Block("heading", "Three", level=1),
            Block("paragraph", "Another paragraph that is long enough to stand on its own here."),
            Block("table-row", "A: 1"),
            Block("table-row", "A: 2"),
        ],
        SplitConfig(min_chars=20),
    )
    b.check_invariants(doc)
    texts = [p.text for p in doc.paragraphs]
    assert texts[0] == "Version 2.\n\nThis paragraph is long enough to stand on its own in the index."
    assert texts[1] == "Short."  # alone in its section: kept, not merged across the heading
    assert texts[-2:] == ["A: 1", "A: 2"]  # table rows are never merged


def test_empty_blocks_dropped_and_title_fallbacks() -> None:
    doc = _doc(
        [Block("paragraph", "   "), Block("heading", "Found Heading", level=2), Block("paragraph", "Body.")]
    )
    assert doc.title == "Found Heading"
    assert len(doc.paragraphs) == 1
    assert _doc([Block("paragraph", "Just text.")]).title == "mem"


def test_sentencizer_is_cached() -> None:
    from compliance.connectors.sentences import sentence_spans, sentencizer

    assert sentencizer() is sentencizer()
    text = "First sentence here.  Second one follows! Third?"
    spans = sentence_spans(text)
    assert [text[a:c] for a, c in spans] == ["First sentence here.", "Second one follows!", "Third?"]


def test_random_block_sequences_keep_every_invariant() -> None:
    """A seeded property test: any block sequence and budget gives in-bounds, exact, ordered spans."""
    import random

    from compliance.connectors.assemble import BlockKind

    rng = random.Random(20240501)
    vocab = ["data", "controller", "shall", "Art.", "5(1)", "e-mail", "—", "record", "processing", "“quoted”"]
    kinds: list[BlockKind] = ["paragraph", "paragraph", "list-item", "table-row", "heading"]
    for _ in range(60):
        blocks = []
        for _ in range(rng.randrange(0, 25)):
            kind = rng.choice(kinds)
            words = [rng.choice(vocab) for _ in range(rng.randrange(0, 120))]
            text = " ".join(w + rng.choice(["", "", "", ".", ",", ":", ";", "\n"]) for w in words)
            blocks.append(Block(kind, text, level=rng.randrange(0, 4), marker=rng.choice(["", "1.", "(a)"])))
        config = SplitConfig(max_tokens=rng.randrange(8, 80), min_chars=rng.randrange(0, 60))
        doc = _doc(blocks, config)
        b.check_invariants(doc, max_tokens=config.max_tokens)
        body = [blk for blk in blocks if blk.kind != "heading" and blk.text.strip()]
        assert bool(doc.paragraphs) == bool(body)


def test_a_first_row_that_reads_as_data_is_no_header() -> None:
    """A questionnaire's table without a marked header: its first row is a question, not column names. It had
    become the header of the rows beneath it ("3.1: 3.2; Is multi-factor authentication enforced …?: …"). Column
    names stay a header; a two-column table stays label/value pairs."""
    questions = [
        ["3.1", "Is multi-factor authentication enforced for remote access?", "Yes / No"],
        ["3.2", "Is data encrypted at rest?", ""],
    ]
    assert [blk.text for blk in table_blocks(questions)] == [
        "3.1; Is multi-factor authentication enforced for remote access?; Yes / No",
        "3.2; Is data encrypted at rest?",
    ]
    ids = [["AC-01", "Access reviews", "Quarterly"], ["AC-02", "Leaver removal", "Same day"]]
    assert [blk.text for blk in table_blocks(ids)] == [
        "AC-01; Access reviews; Quarterly",
        "AC-02; Leaver removal; Same day",
    ]
    named = [["No.", "Control", "Frequency"], ["1", "Access reviews", "Quarterly"]]
    assert [blk.text for blk in table_blocks(named)] == [
        "No.: 1; Control: Access reviews; Frequency: Quarterly"
    ]
    pairs = [["Owner", "CISO"], ["Version", "2.1"]]
    assert [blk.text for blk in table_blocks(pairs)] == ["Owner: CISO", "Version: 2.1"]
