"""Explicit citations in the classifier's scores: a text citing "Art. 30 GDPR" ranks Art. 30 first, says so in
its explanation, and names the cited point as the link's provision target."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from compliance.rules.references import Citation


def test_apply_citations_mixes_the_cited_articles_in_evenly() -> None:
    from compliance.models.citations import apply_citations, citation_matrix

    labels = [5, 15, 17, 32]
    probs = np.array([[0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.3, 0.4]])
    cited = citation_matrix([[Citation(15, "art:15", "Art. 15 GDPR"), Citation(5, "art:5", "x")], []], labels)
    np.testing.assert_allclose(cited, [[0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    out, share = apply_citations(probs, cited, 0.5)
    np.testing.assert_allclose(out[0], [0.3, 0.35, 0.15, 0.2])
    np.testing.assert_allclose(out[1], probs[1])  # a text citing nothing is left as it is
    np.testing.assert_allclose(out.sum(axis=1), 1.0)
    np.testing.assert_allclose(share[0], [0.25 / 0.3, 0.25 / 0.35, 0.0, 0.0])
    assert not share[1].any()


def test_one_cited_article_always_ranks_first_at_the_default_weight() -> None:
    from compliance.models.citations import CitationConfig, apply_citations, citation_matrix

    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.full(99, 0.05), size=200)  # peaked distributions, as the ensemble gives
    cited_article = rng.integers(0, 99, size=200)
    labels = list(range(1, 100))
    citations = [[Citation(int(a) + 1, f"art:{int(a) + 1}", "")] for a in cited_article]
    out, _ = apply_citations(probs, citation_matrix(citations, labels), CitationConfig().weight)
    assert (out.argmax(axis=1) == cited_article).all()


@pytest.mark.parametrize("weight", [0.0, 1.5])
def test_the_citation_weight_is_checked(weight: float) -> None:
    from compliance.errors import ConfigurationError
    from compliance.models.citations import CitationConfig

    with pytest.raises(ConfigurationError, match="citation weight"):
        CitationConfig(weight=weight)


def test_the_classifier_ranks_what_the_text_cites_and_explains_it() -> None:
    pytest.importorskip("torch")
    from compliance.models.classifier import load
    from tests.fixtures.classifier.tiny import shared_tiny_classifier

    clf = load(shared_tiny_classifier(), device="cpu")
    assert not clf.uses_citations  # the mini regulation has no name to be cited by
    text = "Backups are encrypted and restored every quarter, as Art. 17 GDPR requires of us."
    before = clf.predict_proba([text])[0]
    clf.config = replace(clf.config, citation_names=("GDPR",), citation_weight=0.5)
    assert clf.uses_citations
    ranked = clf.rank([text, "Backups are encrypted."], top_k=5, explain=True)
    first = ranked[0][0]
    assert first.article == 17 and first.citation == "Art. 17 GDPR"
    assert (first.components or {})["cited"] > 0
    assert all(not s.citation and "cited" not in (s.components or {}) for s in ranked[0][1:] + ranked[1])
    after = clf.predict_proba([text])[0]
    np.testing.assert_allclose(after, 0.5 * before + 0.5 * np.eye(len(clf.labels))[clf.labels.index(17)])
    # the ablation leaves the citation out; a model without names reads none
    np.testing.assert_allclose(clf.predict_proba([text], citation=False)[0], before)
    clf.config = replace(clf.config, citation_names=None)
    assert clf.citations([text]) is None


def test_the_picker_names_the_cited_provision() -> None:
    from compliance.linking.provisions import ProvisionPicker
    from tests.fixtures.classifier.tiny import mini_gdpr

    picker = ProvisionPicker(mini_gdpr())
    target = picker.cited_target(32, ["art:32/par:2", "art:32/par:3"])
    assert target is not None
    assert (target.key, target.label, target.method, target.runner_up) == (
        "art:32/par:2",
        "Art. 32(2)",
        "citation",
        "art:32/par:3",
    )
    # a point the article lacks: its closest existing parent; a point numbered like a paragraph is read as one
    assert picker.cited_target("art:33", ["art:33/par:4/pt:z"]).key == "art:33/par:4"  # type: ignore[union-attr]
    # the article alone, another article, a subdivision that does not exist: no target
    assert picker.cited_target(32, ["art:32"]) is None
    assert picker.cited_target(32, ["art:17/par:1"]) is None
    assert picker.cited_target(32, ["art:32/par:9"]) is None
