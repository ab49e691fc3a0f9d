"""Training data from the project's own parse of the real GDPR: counts, minK, round-robin, no leakage."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from compliance.errors import ConfigurationError
from compliance.models.data import (
    DataConfig,
    _round_robin,
    article_units,
    build_training_data,
    load_extra_examples,
    split_sentences,
)
from compliance.rules.corpus import Law


@pytest.fixture(scope="module")
def gdpr(shared_data: Path) -> tuple[Law, dict[int, list[int]]]:
    from compliance.rules import get_pack, parse_formex

    xml = shared_data / "laws" / "gdpr" / "gdpr-consolidated-with-corrected-preamble-en.xml"
    return parse_formex(xml.read_bytes(), source=str(xml)), get_pack("gdpr").recital_map()


def test_round_robin_replicates_in_order() -> None:
    assert _round_robin(["t", "a", "b"], 7) == ["t", "a", "b", "t", "a", "b", "t"]
    assert _round_robin(["a", "b", "c"], 2) == ["a", "b", "c"]  # longer groups keep every unit
    assert _round_robin([], 5) == []


def test_sentences_and_points_are_flattened() -> None:
    assert split_sentences("First one. Second one (see Article 6). Third.") == [
        "First one.",
        "Second one (see Article 6).",
        "Third.",
    ]


def test_article_units_of_real_gdpr(gdpr: tuple[Law, dict[int, list[int]]]) -> None:
    law, _ = gdpr
    units = article_units(law)
    assert [u.number for u in units] == list(range(1, 100))
    art6 = units[5]
    assert art6.title == "Lawfulness of processing"
    consent = [u for u in art6.units if "has given consent" in u]
    assert consent and consent[0].startswith("Processing shall be lawful only if")  # premise + point
    assert all(len(u.units) >= 1 for u in units)


def test_training_data_counts_min_k_and_no_leakage(gdpr: tuple[Law, dict[int, list[int]]]) -> None:
    law, rmap = gdpr
    data = build_training_data(law, rmap, DataConfig(min_k=64))
    counts = Counter(e.labels[0] for e in data.train)
    assert sorted(counts) == list(range(1, 100))
    assert min(counts.values()) >= 64
    units = {u.number: u for u in data.articles}
    for art, n in counts.items():  # minK unless the article's group is longer
        assert n == 64 or n >= len(data.train_units[art]) + 2
        assert units[art].title in {e.text for e in data.train if e.labels[0] == art}
    train_texts = {e.text for e in data.train}
    assert data.qa and data.qr and data.calibration
    assert not train_texts & {e.text for e in data.qa}
    assert not train_texts & {e.text for e in data.calibration if e.source == "article"}
    # held-out recitals: neither the recital nor any of its sentences is trained on
    for ex in data.qr + [c for c in data.calibration if c.source == "recital"]:
        assert ex.text not in train_texts
        assert not set(split_sentences(ex.text)) & train_texts
        assert all(1 <= a <= 99 for a in ex.labels)
    p = data.provenance
    assert p["law"]["articles"] == 99 and p["law"]["recitals"] == 173
    assert p["counts"]["train"] == len(data.train) and p["counts"]["qa"] == len(data.qa)
    assert p["recital_pairs"] == sum(len(v) for v in rmap.values())


def test_split_is_deterministic_and_recitals_flag(gdpr: tuple[Law, dict[int, list[int]]]) -> None:
    law, rmap = gdpr
    a = build_training_data(law, rmap, DataConfig())
    b = build_training_data(law, rmap, DataConfig(recitals=False))
    assert [e.id for e in a.qa] == [e.id for e in b.qa]
    assert [e.id for e in a.qr] == [e.id for e in b.qr]
    assert a.provenance["counts"]["train_recital_sentences"] > 0
    assert b.provenance["counts"]["train_recital_sentences"] == 0
    assert len(b.train) <= len(a.train)


def test_extra_supervision(tmp_path: Path, gdpr: tuple[Law, dict[int, list[int]]]) -> None:
    law, rmap = gdpr
    path = tmp_path / "extra.jsonl"
    path.write_text(json.dumps({"id": "x1", "text": "CCTV in the staff canteen", "articles": [5, 6]}) + "\n")
    extra = load_extra_examples(path)
    data = build_training_data(law, rmap, DataConfig(extra_weight=2), extra)
    extra_rows = [e for e in data.train if e.source == "extra"]
    assert len(extra_rows) == 4 and {e.labels[0] for e in extra_rows} == {5, 6}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "text": "t", "articles": [123]}\n')
    with pytest.raises(ConfigurationError, match="unknown article"):
        build_training_data(law, rmap, DataConfig(), load_extra_examples(bad))
    bad.write_text("not json\n")
    with pytest.raises(ConfigurationError):
        load_extra_examples(bad)
