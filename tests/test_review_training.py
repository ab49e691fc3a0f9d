"""Reviews improve the model: reviewed paragraphs from the store, review examples and the unlikelihood of rejected
articles in training, calibration on reviews, and the learning-curve driver's reviewer simulation."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from compliance.app.classifier import reviewed_items
from compliance.models.reviews import (
    ReviewedItem,
    load_reviewed_items,
    review_examples,
    write_reviewed_items,
)
from tests.fixtures.classifier.tiny import (
    _ARTICLES,
    RECITAL_MAP,
    make_tiny_bert,
    mini_gdpr,
    shared_tiny_classifier,
)

torch = pytest.importorskip("torch")


def test_negative_loss_is_the_unlikelihood_of_rejected_articles() -> None:
    from compliance.models.reviews import negative_loss

    logits = torch.zeros((3, 4))
    mask = torch.zeros((3, 4), dtype=torch.bool)
    mask[0, 1] = mask[0, 2] = True
    mask[2, 3] = True
    # rows 0 and 2 have negatives; p = 1/4 everywhere: row 0 → -2 log(3/4), row 2 → -log(3/4)
    expected = (-2 * math.log(0.75) - math.log(0.75)) / 2
    assert float(negative_loss(logits, mask)) == pytest.approx(expected, rel=1e-6)
    assert float(negative_loss(logits, torch.zeros((3, 4), dtype=torch.bool))) == 0.0
    # it pushes the rejected article's logit down
    x = torch.zeros((1, 4), requires_grad=True)
    negative_loss(x, torch.tensor([[False, True, False, False]])).backward()
    assert x.grad is not None and float(x.grad[0, 1]) > 0 and float(x.grad[0, 0]) < 0


def test_review_examples_and_files(tmp_path: Path) -> None:
    items = [
        ReviewedItem("a", "Laptops are encrypted.", (32,), (5,)),
        ReviewedItem("b", "Breaches are reported.", (33, 999), ()),
        ReviewedItem("c", "Cookies are set.", (), (15,)),
        ReviewedItem("d", "Nothing known.", (), (999,)),
    ]
    ex = review_examples(items, [5, 15, 17, 32, 33])
    assert [(e.text, e.labels, e.source) for e in ex] == [
        ("Laptops are encrypted.", (32,), "review"),
        ("Breaches are reported.", (33,), "review"),
        ("Cookies are set.", (), "review"),  # only rejections: taught through the unlikelihood term
    ]
    out = tmp_path / "reviews.jsonl"
    assert write_reviewed_items(items, out) == 4
    assert load_reviewed_items(out) == items


def test_training_with_reviews(tmp_path: Path) -> None:
    from compliance.models.data import DataConfig
    from compliance.models.training import Recipe, train
    from tests.fixtures.classifier.tiny import single_threaded

    base = make_tiny_bert(tmp_path / "base")
    recipe = Recipe(
        name="tiny",
        base_model=str(base),
        data=DataConfig(min_k=8, recital_heldout_share=0.0),
        epochs=1,
        batch_size=16,
        max_length=40,
        inference_max_length=32,
        freeze_layers=0,
        seed=3,
    )
    reviews = [
        ReviewedItem("p1", "All laptops use full disk encryption.", (32,), (5, 33)),
        ReviewedItem("p2", "A breach is notified within 72 hours.", (33,), ()),
        ReviewedItem("p3", "Staff may request a copy of their data.", (), (17,)),
    ]
    with single_threaded():  # type: ignore[attr-defined]
        result = train(recipe, mini_gdpr(), RECITAL_MAP, device="cpu", bf16=False, reviews=reviews)
    provenance = result.data.provenance
    assert provenance["reviews"] == {"items": 3, "accepted": 2, "rejected": 3, "negative_weight": 1.0}
    assert [e.labels for e in result.data.train if e.source == "review"] == [(32,), (33,), ()]
    assert all(math.isfinite(r["loss"]) for r in result.metrics["train_curve"])
    # the law prior and umbrellas are kept: reviews are not "extra supervision"
    assert result.classifier.config.label_prior is not None
    assert result.classifier.meta["law_prior_skipped"] is None


def test_reviewed_items_come_from_human_decisions(store: Any, tmp_path: Path) -> None:
    from compliance.app import audit_documents
    from compliance.app.links import LinkQuery, list_links, review_links
    from compliance.linking.classifier_links import ClassifierLinkConfig
    from compliance.models.classifier import load
    from compliance.store.link_history import NewReview

    store.save_law(mini_gdpr())
    doc = tmp_path / "p.txt"
    doc.write_text(
        "All laptops issued to staff use full disk encryption and the measures are reviewed.\n\n"
        "A personal data breach is notified to the supervisory authority within 72 hours.\n",
        encoding="utf-8",
    )
    clf = load(shared_tiny_classifier(), device="cpu", bf16=False)
    audit_documents(store, [doc], clf, config=ClassifierLinkConfig(top_k=2, review_band=(0.0, 0.5)))
    links = list_links(store, LinkQuery())
    p0 = [x for x in links if x.paragraph_ordinal == 0]
    p1 = [x for x in links if x.paragraph_ordinal == 1]
    review_links(store, [p0[0].link_id], "accept", "alice")
    review_links(store, [p0[1].link_id], "reject", "alice")
    store.add_reviews([NewReview(p1[0].link_id, "accepted", "compliance (system)", "carried", "carry-over")])
    items = reviewed_items(store)
    assert items == [
        ReviewedItem(
            f"paragraph:{p0[0].paragraph_id}", p0[0].paragraph_text, (p0[0].article,), (p0[1].article,)
        )
    ]
    assert len(reviewed_items(store, include_system=True)) == 2


def test_calibration_on_reviews(tmp_path: Path) -> None:
    import numpy as np

    from compliance.models.review_calibration import calibrate_from_reviews, review_band

    assert review_band(
        np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.2]), np.array([1, 1, 1, 1, 1, 0], dtype=bool)
    ) == (0.1, 0.3)
    model = tmp_path / "model"
    shutil.copytree(shared_tiny_classifier(), model)
    items = [
        ReviewedItem(f"{n}:{i}", sentence, (n,), tuple(a for a in (5, 15) if a != n))
        for n, (_, sentences) in _ARTICLES.items()
        for i, sentence in enumerate(sentences[:3])
    ]
    before = json.loads((model / "config.json").read_text())["inference"]
    summary = calibrate_from_reviews(model, items, device="cpu")
    assert summary["reviewed_paragraphs"] == summary["with_accepted"] == 15
    assert summary["before"] == {"temperature": before["temperature"], "review_band": before["review_band"]}
    after = json.loads((model / "config.json").read_text())
    assert after["inference"]["temperature"] == summary["after"]["temperature"] != before["temperature"]
    assert after["inference"]["review_band"] == summary["after"]["review_band"]
    assert after["calibrated_from_reviews"]["with_accepted"] == 15
    from compliance.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="at least 10 are needed"):
        calibrate_from_reviews(model, items[:4], device="cpu")


def test_train_and_calibrate_commands_need_reviews(tmp_path: Path) -> None:
    from compliance.cli import cli

    db = f"sqlite:///{tmp_path / 'empty.db'}"
    res = CliRunner().invoke(
        cli, ["calibrate", "--from-reviews", "--model", str(shared_tiny_classifier()), "--database", db]
    )
    assert res.exit_code == 1 and "0 reviewed paragraph(s)" in res.stderr
    res = CliRunner().invoke(
        cli, ["train", "--with-reviews", "--recipe", "r-fast", "--database", db, "--out", str(tmp_path / "m")]
    )
    assert res.exit_code == 1 and "no reviewed GDPR links in the database yet" in res.stderr


def test_simulated_reviewer() -> None:
    from experiments.review_learning_curve import render_table, simulate_reviews

    rows = [
        {"id": "x", "text": "t", "gdpr_articles": [6, 32]},
        {"id": "y", "text": "u", "gdpr_articles": [15]},
    ]
    items = simulate_reviews(rows, [[32, 5, 6], [17, 21, 22]])
    assert items == [ReviewedItem("x", "t", (6, 32), (5,)), ReviewedItem("y", "u", (15,), (17, 21, 22))]
    table = render_table(
        {
            "prior": {"mrr": 0.2, "f_mu": 0.01},
            "rows": [
                {
                    "reviewed": 0,
                    "accepted": 0,
                    "rejected": 0,
                    "mrr": 0.3,
                    "f_mu": 0.1,
                    "acc@1": 0.2,
                    "ece": 0.05,
                }
            ],
        }
    )
    assert table.splitlines()[2:] == [
        "| frequency prior | | | 0.200 | 0.010 | | |",
        "| 0 | 0 | 0 | 0.300 | 0.100 | 0.200 | 0.050 |",
    ]


def test_the_curves_shortcut_scores_like_the_classifier() -> None:
    """The learning curve encodes the held-out texts once and applies each head-only model's head: the scores
    must be the classifier's own."""
    import numpy as np

    from compliance.models.classifier import load
    from experiments.review_learning_curve import FrozenEncoding, frozen_scores

    clf = load(shared_tiny_classifier(), device="cpu", bf16=False)
    texts = ["Laptops use full disk encryption.", "A breach is notified within 72 hours. " * 30]
    enc = FrozenEncoding(clf, texts)
    assert np.allclose(frozen_scores(clf, enc), clf.predict_proba(texts), atol=1e-5)
    other = load(shared_tiny_classifier(), device="cpu", bf16=False)
    with torch.no_grad():
        next(other.encoder.model.parameters()).add_(1.0)
    import click

    with pytest.raises(click.ClickException, match="not the frozen one"):
        frozen_scores(other, enc)


def _maritime_act() -> Any:
    """An act of another field whose sentences share words with the mini GDPR's Art. 33 ("notify", "72 hours",
    "authority") in another sense."""
    from tests.fixtures.classifier.tiny import mini_law

    sentences = [
        "Vessels shall notify the port authority of their position within 72 hours of arrival.",
        "The harbour master shall notify the port authority within 72 hours of any change of berth.",
        "The port authority shall be notified without undue delay of cargo discharged after 72 hours.",
        "Pilots shall notify the port authority within 72 hours after completing each pilotage.",
    ]
    return mini_law(
        {1: ("Port notifications", sentences)},
        {},
        short_name="maritime",
        identifier="maritime",
        title="Maritime act for tests",
        checksum="1" * 64,
    )


def test_training_with_hard_negatives_from_another_act(tmp_path: Path) -> None:
    from compliance.models.training import train
    from tests.fixtures.classifier.tiny import single_threaded, tiny_recipe

    base = make_tiny_bert(tmp_path / "base")
    act = _maritime_act()
    texts = [u for u in (p.text for p in act.provisions) if u]

    def art33_share(negatives: tuple[str, ...]) -> tuple[float, Any]:
        recipe = tiny_recipe(base, epochs=3, negative_acts=negatives, negative_weight=8.0)
        with single_threaded():  # type: ignore[attr-defined]
            result = train(recipe, mini_gdpr(), RECITAL_MAP, device="cpu", bf16=False, acts={"maritime": act})
        clf = result.classifier
        logits = torch.tensor(clf.logits(texts))  # the encoder and head alone, before the temperature
        return float(torch.softmax(logits, dim=-1)[:, clf.labels.index(33)].mean()), result

    without, _ = art33_share(())
    with_negatives, result = art33_share(("maritime",))
    mined = [e for e in result.data.train if e.source == "negative"]
    assert mined and {e.negatives for e in mined} == {(33,)}
    assert result.data.provenance["counts"]["negatives"] == len(mined)
    assert result.data.provenance["acts"]["maritime"]["use"] == ["negatives"]
    from compliance.models.card import model_card

    card = model_card(result.classifier, result.metrics)
    assert "other acts' official text" in card and "- hard negatives (GDPR article: sentences" in card
    assert '"33": ' + str(len(mined)) in card
    assert all(math.isfinite(r["loss"]) for r in result.metrics["train_curve"])
    # the unlikelihood term moves the other field's sentences off Art. 33 ...
    assert with_negatives < 0.5 * without
    # ... and the GDPR's own breach sentence stays Art. 33's
    clf = result.classifier
    breach = clf.predict_proba(
        ["A personal data breach is notified to the supervisory authority."], prior=False
    )
    assert clf.labels[int(breach[0].argmax())] == 33
