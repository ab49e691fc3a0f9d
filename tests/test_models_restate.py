"""The law's training sentences restated in a policy's words (compliance.models.restate, DataConfig.restated)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compliance.models.data import DataConfig, build_training_data, restated_units
from compliance.models.restate import restate
from compliance.rules.corpus import Law


@pytest.fixture(scope="module")
def gdpr(shared_data: Path) -> tuple[Law, dict[int, list[int]]]:
    from compliance.rules import get_pack, parse_formex

    xml = shared_data / "laws" / "gdpr" / "gdpr-consolidated-with-corrected-preamble-en.xml"
    return parse_formex(xml.read_bytes(), source=str(xml)), get_pack("gdpr").recital_map()


def test_the_controller_speaks_as_we_and_shall_becomes_must() -> None:
    text = "The controller shall implement appropriate technical and organisational measures."
    out = restate(text)
    assert out.startswith("We implement appropriate ")
    assert "shall" not in out and "measures" not in out
    assert restate("The processor shall not engage another processor without authorisation.") in {
        f"The {who} must not engage a {sub} without authorisation."
        for who in ("supplier", "vendor", "service provider")
        for sub in ("sub-processor", "subcontractor")
    }
    assert restate("the controller shall not transfer") == "we do not transfer"
    assert restate("The controller has to") == "We have to"
    # a word that is already a practitioner's is left alone, hyphenated compounds included
    assert restate("Our sub-processor list is published.") == "Our sub-processor list is published."


def test_terms_of_the_law_get_the_professions_names() -> None:
    cases = {
        "notify the personal data breach to the supervisory authority": ("data breach", "security incident"),
        "carry out a data protection impact assessment": ("DPIA", "privacy impact assessment"),
        "the data protection officer": ("DPO", "privacy officer"),
        "transfers to a third country": ("outside the EEA", "non-EU country"),
        "the right to erasure": ("deletion",),
    }
    for text, expected in cases.items():
        out = restate(text)
        assert any(e in out for e in expected), (text, out)
    # information given to the data subject at collection is the privacy notice (Art. 13)
    art13 = (
        "the controller shall, at the time when personal data are obtained, provide the data subject with all of"
        " the following information:"
    )
    assert "privacy notice" in restate(art13)


def test_restatement_is_deterministic_and_keeps_what_it_does_not_know() -> None:
    text = "The processor shall assist the controller in ensuring compliance with the obligations."
    assert restate(text) == restate(text)
    assert (
        restate("The Board shall adopt its rules of procedure.")
        == "The Board must adopt its rules of procedure."
    )
    assert restate("Encryption keys are rotated yearly.") == "Encryption keys are rotated yearly."


def test_restated_units_come_from_training_units_only(gdpr: tuple[Law, dict[int, list[int]]]) -> None:
    law, rmap = gdpr
    plain = build_training_data(law, rmap, DataConfig())
    data = build_training_data(law, rmap, DataConfig(restated=True))
    # the held-out sets are the law's own sentences, unchanged
    for name in ("qa", "qr", "calibration"):
        assert [(e.id, e.text) for e in getattr(data, name)] == [(e.id, e.text) for e in getattr(plain, name)]
    heldout = {e.text for e in (*data.qa, *data.calibration)}
    assert data.restated_units == restated_units(data.train_units)
    restated_rows = [e for e in data.train if e.source == "restated"]
    assert restated_rows and all(e.labels for e in restated_rows)
    for e in restated_rows:
        assert e.text in data.restated_units[e.labels[0]]
    # nothing restated from a held-out sentence: each restated unit is the restatement of a training unit
    from_training = {a: {restate(u) for u in units} for a, units in data.train_units.items()}
    assert all(set(v) <= from_training[a] for a, v in data.restated_units.items())
    assert not heldout & {e.text for e in restated_rows}
    # Art. 13's group now speaks of the privacy notice, Art. 28's of suppliers; so does the lexical expert
    assert any("privacy notice" in t for t in data.restated_units[13])
    assert any("supplier" in t or "vendor" in t for t in data.restated_units[28])
    assert "privacy notice" in data.lexical_documents()[13]
    assert "privacy notice" not in plain.lexical_documents()[13]
    assert data.provenance["counts"]["restated_units"] == sum(len(v) for v in data.restated_units.values())
    assert len(data.train) > len(plain.train)
    assert {e.text for e in plain.train} <= {e.text for e in data.train}


def test_the_default_recipe_restates_the_gdpr_and_reads_nis2_for_art_32() -> None:
    from compliance.models.training import get_recipe

    recipe = get_recipe("r")
    assert recipe.data.restated and recipe.data.acts == ("nis2",)
    assert recipe.data.parallel_provisions == (("nis2", 21, 32),) and not recipe.data.parallel_acts
    literal = get_recipe("r-literal")
    assert not literal.data.restated and literal.epochs == recipe.epochs and literal.soup == recipe.soup
    # the recipes that add other acts were measured on the literal sentences and keep them
    assert not get_recipe("r-parallel").data.restated and not get_recipe("r-acts").data.restated
    # a model trained before the option existed reads as unrestated
    assert DataConfig(**{k: v for k, v in DataConfig().__dict__.items() if k != "restated"}) == DataConfig()


def test_umbrella_members_are_read_from_the_laws_own_words(gdpr: tuple[Law, dict[int, list[int]]]) -> None:
    from compliance.models.lexical import LexicalArticleScorer
    from compliance.models.training import lexical_expert, umbrella_reader
    from compliance.models.umbrella import UmbrellaConfig, principle_umbrellas

    law, rmap = gdpr
    plain = build_training_data(law, rmap, DataConfig())
    data = build_training_data(law, rmap, DataConfig(restated=True))
    labels = sorted(a.number for a in data.articles)
    config = UmbrellaConfig(top_k=3)
    expected = principle_umbrellas(law, LexicalArticleScorer(plain.lexical_documents()), labels, config)
    assert principle_umbrellas(law, umbrella_reader(data, lexical_expert(data)), labels, config) == expected
    # Art. 6 (lawfulness) gives effect to Art. 5(1)(a); read through the restated sentences it would not
    assert 6 in expected[5]
    assert (
        6 not in principle_umbrellas(law, LexicalArticleScorer(data.lexical_documents()), labels, config)[5]
    )
    # without restated sentences the reader reads the model's own expert's documents, as every model before
    # session 35 read terms (short stop-word list, numbers kept): the members found in the law stay what they were
    own = lexical_expert(plain)
    assert own.analysis == {"stopwords": "en_plus", "numbers": False}
    reader = umbrella_reader(plain, own)
    assert reader.documents == own.documents and reader.analysis == LexicalArticleScorer.DEFAULT_ANALYSIS
    earlier = LexicalArticleScorer(plain.lexical_documents())
    assert umbrella_reader(plain, earlier) is earlier
