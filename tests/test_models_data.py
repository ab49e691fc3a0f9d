"""Training data from the project's own parse of the real GDPR: counts, minK, round-robin, no leakage."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
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


def test_public_duties_left_out_of_an_article_that_mostly_obliges_the_regulated(
    gdpr: tuple[Law, dict[int, list[int]]],
) -> None:
    law, rmap = gdpr
    kept = build_training_data(law, rmap, DataConfig())
    dropped = build_training_data(law, rmap, DataConfig(public_duties=False))
    assert [e.id for e in kept.qa] == [e.id for e in dropped.qa]  # the held-out sets stay the law's
    assert [e.id for e in kept.calibration] == [e.id for e in dropped.calibration]
    sa_list = "The supervisory authority shall establish and make public a list of the kind of processing"
    in_35 = [u for u in kept.train_units[35] if u.startswith(sa_list)]
    assert in_35, "Art. 35(4) is a training sentence of Art. 35 by default"
    assert not [u for u in dropped.train_units[35] if u.startswith(sa_list)]
    assert not {e.text for e in dropped.train if e.labels == (35,)} & set(in_35)
    assert set(dropped.train_units[35]) < set(kept.train_units[35])  # the controller's sentences stay
    # the supervisory authority's powers are what Art. 58 is: its sentences all stay
    assert dropped.train_units[58] == kept.train_units[58]
    assert dropped.provenance["data_config"]["public_duties"] is False


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


@pytest.fixture(scope="module")
def other_acts(shared_data: Path) -> dict[str, Law]:
    """The Law Enforcement Directive (a parallel data-protection act) and the Radio Equipment and Payment
    Services Directives (other fields), as the law packs parse them."""
    from compliance.rules import parse_eu_json

    return {
        name: parse_eu_json((shared_data / "laws" / "eu" / f"{name}.json").read_bytes(), source=name)
        for name in ("led", "red", "psd2", "nis2")
    }


def test_parallel_provisions_restate_one_gdpr_article_each(
    gdpr: tuple[Law, dict[int, list[int]]], other_acts: dict[str, Law]
) -> None:
    from compliance.models.data import parallel_units

    law, _ = gdpr
    found = parallel_units(article_units(law), other_acts["led"])
    # LED Art. 29 "Security of processing" restates GDPR Art. 32 in control language
    assert any("equipment access control" in u for u in found[32])
    assert any("personal data breach" in u for u in found[33])
    # "Independence" is the title of GDPR Arts. 52 and 69: it names neither
    independence = next(a for a in article_units(other_acts["led"]) if a.title == "Independence")
    assert not set(independence.units) & {u for a in (52, 69) for u in found.get(a, [])}
    # an act of another field restates nothing but its procedural clauses
    assert set(parallel_units(article_units(law), other_acts["red"])) <= {4, 84, 92, 93}


def test_hard_negatives_come_from_other_fields_and_only_add_training_rows(
    gdpr: tuple[Law, dict[int, list[int]]], other_acts: dict[str, Law]
) -> None:
    from compliance.models.data import negative_candidates

    law, rmap = gdpr
    candidates = negative_candidates(other_acts["psd2"])
    assert candidates and not [t for t in candidates if "personal data" in t.lower()]
    assert not [t for t in candidates if "privacy" in t.lower() or "2016/679" in t]
    config = DataConfig(
        parallel_acts=("led",), negative_acts=("red", "psd2"), negative_min_share=0.3, negatives_per_article=4
    )
    data = build_training_data(law, rmap, config, acts=other_acts)
    plain = build_training_data(law, rmap, DataConfig())
    # the held-out sets are the GDPR's alone
    for name in ("qa", "qr", "calibration"):
        assert [e.id for e in getattr(data, name)] == [e.id for e in getattr(plain, name)]
    negatives = [e for e in data.train if e.source == "negative"]
    assert negatives and all(e.labels == () and len(e.negatives) == 1 for e in negatives)
    per_article = Counter(e.negatives[0] for e in negatives)
    assert max(per_article.values()) <= 4
    assert {e.text for e in negatives} <= set(negative_candidates(other_acts["red"])) | set(candidates)
    assert not {e.text for e in negatives} & {e.text for e in data.train if e.labels}
    # each mined article is the one the lexical expert over the GDPR's training text ranks first, with >= 0.3
    from compliance.models.lexical import LexicalArticleScorer

    lexical = LexicalArticleScorer(data.lexical_documents())
    probs = np.exp(lexical.log_probs([e.text for e in negatives]))
    for e, row in zip(negatives, probs, strict=True):
        assert lexical.labels[int(row.argmax())] == e.negatives[0] and row.max() >= 0.3
    parallel = [e for e in data.train if e.source == "parallel"]
    assert {e.labels[0] for e in parallel} >= {32, 33, 35}
    assert any("equipment access control" in d for d in [data.lexical_documents()[32]])
    p = data.provenance
    assert p["counts"]["negatives"] == len(negatives) and p["counts"]["parallel_units"] > 0
    assert p["acts"]["led"]["use"] == ["parallel"] and p["acts"]["psd2"]["use"] == ["negatives"]
    assert p["acts"]["red"]["checksum"] == other_acts["red"].checksum
    assert sum(p["negatives_by_article"].values()) == len(negatives)
    assert config.acts == ("led", "red", "psd2")


def test_provisions_of_other_acts_mapped_to_an_article(
    gdpr: tuple[Law, dict[int, list[int]]], other_acts: dict[str, Law]
) -> None:
    """NIS2 Art. 21 (cybersecurity risk-management measures) states the security of processing for network and
    information systems under another title: mapped to GDPR Art. 32 for the lexical expert only, its units extend
    Art. 32's lexical document and nothing else; mapped as a parallel provision, they are training text too. The
    Commission's implementing acts in the same article oblige nobody an organisation's control answers to."""
    from compliance.models.data import provision_units
    from compliance.models.training import umbrella_reader

    law, rmap = gdpr
    units = provision_units(other_acts["nis2"], 21)
    assert any("business continuity" in u for u in units)
    assert any("multi-factor authentication" in u for u in units)
    assert not [u for u in units if "implementing acts" in u and "Commission" in u]
    plain = build_training_data(law, rmap, DataConfig())
    config = DataConfig(lexical_provisions=(("nis2", 21, 32),))
    assert config.acts == ("nis2",)
    data = build_training_data(law, rmap, config, acts=other_acts)
    # the encoder's training set and the held-out sets are the GDPR's alone
    for name in ("train", "qa", "qr", "calibration"):
        assert [(e.id, e.text) for e in getattr(data, name)] == [(e.id, e.text) for e in getattr(plain, name)]
    documents, before = data.lexical_documents(), plain.lexical_documents()
    assert [a for a in documents if documents[a] != before[a]] == [32]
    assert documents[32] == "\n".join((before[32], *units))
    assert data.lexical_documents(gdpr_only=True) == before
    # the umbrellas' members are read from the GDPR's own words
    assert umbrella_reader(data).documents == plain.lexical_documents(restated=False)
    p = data.provenance
    assert p["counts"]["lexical_units"] == len(units) and p["lexical_articles"] == {"32": len(units)}
    assert p["acts"]["nis2"]["use"] == ["lexical provisions"]
    assert DataConfig(**json.loads(json.dumps(config.__dict__))) == config
    # as a parallel provision, training text of Art. 32 as well
    parallel = build_training_data(
        law, rmap, DataConfig(parallel_provisions=(("nis2", 21, 32),)), acts=other_acts
    )
    added = [e for e in parallel.train if e.source == "parallel"]
    assert added and {e.labels for e in added} == {(32,)} and {e.text for e in added} <= set(units)
    with pytest.raises(ConfigurationError, match=r"GDPR Art\. 100"):
        build_training_data(law, rmap, DataConfig(lexical_provisions=(("nis2", 21, 100),)), acts=other_acts)
    with pytest.raises(ConfigurationError, match="no article 400"):
        build_training_data(law, rmap, DataConfig(lexical_provisions=(("nis2", 400, 32),)), acts=other_acts)


def test_the_recitals_explaining_a_parallel_provision_in_the_lexical_document(
    gdpr: tuple[Law, dict[int, list[int]]], other_acts: dict[str, Law]
) -> None:
    """``lexical_recitals``: the recitals the NIS2 law pack pairs with Art. 21 (77-89, its section on
    cybersecurity risk-management measures) join Art. 32's lexical document, sentence by sentence, and nothing
    else: the encoder's training rows and the held-out sets are those of the recipe without them."""
    from compliance.models.data import provision_recitals
    from compliance.rules.packs import get_pack

    law, rmap = gdpr
    assert get_pack("nis2").recital_map() == {21: list(range(77, 90))}
    numbers, sentences = provision_recitals(other_acts["nis2"], "nis2", 21)
    assert numbers == list(range(77, 90))
    assert any(
        "zero-trust principles, software updates, device configuration, network segmentation" in s
        for s in sentences
    )
    assert provision_recitals(other_acts["nis2"], "nis2", 23) == ([], [])  # an article the pack does not map
    base = DataConfig(parallel_provisions=(("nis2", 21, 32),))
    plain = build_training_data(law, rmap, base, acts=other_acts)
    data = build_training_data(law, rmap, replace(base, lexical_recitals=True), acts=other_acts)
    for name in ("train", "qa", "qr", "calibration"):
        assert [(e.id, e.text) for e in getattr(data, name)] == [(e.id, e.text) for e in getattr(plain, name)]
    documents, before = data.lexical_documents(), plain.lexical_documents()
    assert [a for a in documents if documents[a] != before[a]] == [32]
    assert documents[32] == "\n".join((before[32], *sentences))
    assert data.lexical_documents(gdpr_only=True) == plain.lexical_documents(gdpr_only=True)
    p = data.provenance
    assert p["lexical_recitals"] == {"nis2": {"21": numbers}} and "lexical_recitals" not in plain.provenance
    assert p["counts"]["lexical_units"] == len(sentences)
    # the default recipe reads them
    from compliance.models.training import get_recipe

    assert get_recipe("r").data.lexical_recitals


def test_the_recitals_explaining_a_parallel_provision_as_encoder_training_text(
    gdpr: tuple[Law, dict[int, list[int]]], other_acts: dict[str, Law]
) -> None:
    """``parallel_recitals``: the recitals the NIS2 law pack pairs with Art. 21 join Art. 32's training group as
    parallel text; no other article's group, no held-out set and no lexical document changes (the lexical expert
    reads them through ``lexical_recitals`` only, the umbrella reader not at all)."""
    from compliance.models.data import provision_recitals

    law, rmap = gdpr
    _, sentences = provision_recitals(other_acts["nis2"], "nis2", 21)
    base = DataConfig(parallel_provisions=(("nis2", 21, 32),), lexical_recitals=True, min_k=1)
    plain = build_training_data(law, rmap, base, acts=other_acts)
    data = build_training_data(law, rmap, replace(base, parallel_recitals=True), acts=other_acts)
    for name in ("qa", "qr", "calibration"):
        assert [(e.id, e.text) for e in getattr(data, name)] == [(e.id, e.text) for e in getattr(plain, name)]
    group = {e.text for e in data.train if e.labels == (32,)}
    before = {e.text for e in plain.train if e.labels == (32,)}
    assert group - before == set(sentences) - before and set(sentences) <= group
    assert {e.source for e in data.train if e.text in set(sentences) - before} == {"parallel"}
    others = [(e.text, e.labels) for e in data.train if e.labels != (32,)]
    assert others == [(e.text, e.labels) for e in plain.train if e.labels != (32,)]
    assert data.lexical_documents() == plain.lexical_documents()
    assert data.lexical_documents(gdpr_only=True) == plain.lexical_documents(gdpr_only=True)
    assert data.provenance["parallel_recitals"] == {"nis2": {"21": list(range(77, 90))}}
    assert "parallel_recitals" not in plain.provenance


def test_a_recipe_naming_an_unreadable_act_says_so(gdpr: tuple[Law, dict[int, list[int]]]) -> None:
    law, rmap = gdpr
    with pytest.raises(ConfigurationError, match="no-such-act"):
        build_training_data(law, rmap, DataConfig(negative_acts=("no-such-act",)))


def test_recipes_that_read_other_acts_name_them() -> None:
    from compliance.models.training import get_recipe

    # the default reads the GDPR, and NIS2's security measures as Art. 32's text
    assert get_recipe("r").data.acts == ("nis2",)
    assert get_recipe("r").data.parallel_provisions == (("nis2", 21, 32),)
    assert get_recipe("r").data.lexical_provisions == ()
    assert get_recipe("r-parallel").data.acts == ("led",)
    led = get_recipe(
        "r-led"
    )  # the default's restated training and ensemble, plus the LED's parallel provisions
    assert led.data.acts == ("led", "nis2") and led.data.restated
    assert replace(led, name="r", data=get_recipe("r").data) == get_recipe("r")
    acts = get_recipe("r-acts").data
    assert acts.parallel_acts == ("led",) and set(acts.negative_acts) == {"aifmd", "mifid2", "psd2", "red"}
    # stored as JSON and read back, the recipe is the same
    stored = json.loads(json.dumps(acts.__dict__))
    assert DataConfig(**stored) == acts
    # overridden by name like any data field
    assert get_recipe("r-acts", negative_acts=()).data.acts == ("led",)


def test_keyword_negatives_are_an_articles_rarest_words_in_order(
    gdpr: tuple[Law, dict[int, list[int]]],
) -> None:
    law, rmap = gdpr
    plain = build_training_data(law, rmap, DataConfig())
    data = build_training_data(law, rmap, DataConfig(keyword_negatives=3))
    assert [e.id for e in plain.qa] == [e.id for e in data.qa]  # only training rows are added
    added = [e for e in data.train if e.id.startswith("keywords:")]
    assert [e for e in data.train if not e.id.startswith("keywords:")] == plain.train
    assert len(added) == data.provenance["counts"]["keyword_negatives"] > 300
    assert plain.provenance["counts"]["keyword_negatives"] == 0
    word = re.compile(r"[^\W\d_][\w-]*")
    for e in added:
        assert e.labels == () and e.source == "negative" and len(e.negatives) == 1
        keys = e.text.split()
        assert len(keys) == 3 and len({k.lower() for k in keys}) == 3
        # the words come, in their order, from one training sentence of the article they are a negative of
        assert any(_in_order(keys, word.findall(unit)) for unit in data.train_units[e.negatives[0]]), e.text
    # the rare words of Art. 15(3), not its common ones ("shall", "data", "personal" are in every article)
    ours = [e.text.lower().split() for e in added if e.negatives == (15,)]
    assert any("copy" in k for k in ours)
    assert not any({"shall", "data", "personal"} & set(k) for k in ours)


def _in_order(keys: list[str], words: list[str]) -> bool:
    it = iter(words)
    return all(any(k == w for w in it) for k in keys)


def test_a_recital_of_several_articles_gives_each_sentence_to_the_articles_it_speaks_of(
    gdpr: tuple[Law, dict[int, list[int]]],
) -> None:
    from compliance.models.data import _alignment_scorer, align_recital_sentences

    law, rmap = gdpr
    assert sorted(a for a, recs in rmap.items() if 39 in recs) == [5, 6, 30]
    assert sorted(a for a, recs in rmap.items() if 65 in recs) == [16, 17]
    articles = article_units(law)
    scorer = _alignment_scorer(articles, {a.number: list(a.units) for a in articles})
    erasure_limits = (
        "In order to ensure that the personal data are not kept longer than necessary, time limits should be "
        "established by the controller for erasure or for a periodic review."
    )
    forgotten = (
        "In particular, a data subject should have the right to have his or her personal data erased and no "
        "longer processed where the personal data are no longer necessary in relation to the purposes for "
        "which they are collected or otherwise processed."
    )
    assert align_recital_sentences([erasure_limits], [5, 6, 30], scorer, 0.8) == [[5]]
    assert align_recital_sentences([forgotten], [16, 17], scorer, 0.8) == [[17]]
    # a sentence sharing no indexed term with either article goes to both; one article alone keeps it
    assert align_recital_sentences(["Zebra quokka."], [16, 17], scorer, 0.8) == [[16, 17]]
    assert align_recital_sentences([forgotten], [16], scorer, 0.8) == [[16]]
    # share 0 keeps every article whose score is not negative: all of them
    assert align_recital_sentences([forgotten], [16, 17], scorer, 0.0) == [[16, 17]]

    plain = build_training_data(law, rmap, DataConfig())
    aligned = build_training_data(law, rmap, DataConfig(recital_alignment=0.8))
    in_group = {
        name: {n: {e.text for e in data.train if e.labels == (n,)} for n in (16, 17)}
        for name, data in (("plain", plain), ("aligned", aligned))  # recital 65 is a training recital
    }
    assert any("erased and no longer processed" in t for t in in_group["plain"][16])
    assert not any("erased and no longer processed" in t for t in in_group["aligned"][16])
    assert any("erased and no longer processed" in t for t in in_group["aligned"][17])
    # the held-out sets do not change: the alignment only chooses which training group a sentence joins
    assert [e.id for e in plain.qr] == [e.id for e in aligned.qr]
    assert [e.id for e in plain.qa] == [e.id for e in aligned.qa]
    with pytest.raises(ConfigurationError):
        DataConfig(recital_alignment=1.5)
