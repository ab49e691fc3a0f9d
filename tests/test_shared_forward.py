"""One forward, two uses (issue 12): the audit's classifier pass also gives the controls index's vectors, stored
once, so that the controls index (the alert runs' candidate search) embeds no audited paragraph again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.fixtures.classifier.tiny import mini_gdpr, shared_tiny_classifier

pytest.importorskip("torch")

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

LONG = " ".join(
    f"the controller keeps records of processing number {i} and reviews the security of processing every year"
    for i in range(30)
)
TEXTS = [
    "All laptops use full disk encryption and the security measures are reviewed every year.",
    "A personal data breach is notified to the supervisory authority within 72 hours.",
    LONG,  # longer than both the classifier's windows (128) and the index's chunks (256)
    "Data subjects may ask for a copy of their personal data.",
]


@pytest.fixture(scope="module")
def model_dir() -> Path:
    return shared_tiny_classifier()


def _text_encoder(model_dir: Path) -> Any:
    from compliance.retrieval.config import DenseConfig
    from compliance.retrieval.encoding import TextEncoder

    encoder = TextEncoder(DenseConfig(model=str(model_dir / "encoder")), device="cpu")
    encoder._enc.use_bf16 = False  # the classifier below runs in fp32: compare like with like
    return encoder


def test_the_forward_gives_the_vectors_a_separate_embedding_pass_gives(model_dir: Path) -> None:
    from compliance.models.classifier import load

    clf = load(model_dir, device="cpu", bf16=False)
    encoder = _text_encoder(model_dir)
    space = encoder.space()
    assert space is not None
    both = clf.forward(TEXTS, space)
    assert both.vectors is not None and len(both.vectors) == len(TEXTS)
    # the logits are those of the classifier alone: the index-only chunks do not change them
    np.testing.assert_allclose(both.logits, clf.logits(TEXTS), rtol=1e-5, atol=1e-5)
    separate, owner = encoder.encode_chunks(TEXTS)
    for i, vectors in enumerate(both.vectors):
        expected = separate[owner == i]
        assert vectors.shape == expected.shape and vectors.dtype == np.float32
        np.testing.assert_allclose(vectors, expected, rtol=1e-4, atol=1e-5)
    assert both.vectors[2].shape[0] > 1  # the long text is several chunks


def test_texts_wanted_for_their_vectors_only_run_in_the_same_pass(model_dir: Path) -> None:
    """A list item classified after its lead-in is stored with its own text's vectors: those texts run in the same
    pass as the classified ones (``also``), and give what a pass of their own gives."""
    from compliance.models.classifier import load

    clf = load(model_dir, device="cpu", bf16=False)
    space = _text_encoder(model_dir).space()
    assert space is not None
    own = ["review user access rights every quarter", LONG]
    both = clf.forward(TEXTS, space, also=own)
    alone = clf.forward(TEXTS, space)
    apart = clf.forward(own, space)
    assert both.vectors is not None and alone.vectors is not None and apart.vectors is not None
    assert both.logits.shape == alone.logits.shape and both.embeddings is not None
    assert alone.embeddings is not None and both.embeddings.shape == alone.embeddings.shape
    np.testing.assert_allclose(both.logits, alone.logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(both.embeddings, alone.embeddings, rtol=1e-4, atol=1e-5)
    assert len(both.vectors) == len(TEXTS) + len(own)
    for got, expected in zip(both.vectors, [*alone.vectors, *apart.vectors], strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_the_forward_gives_each_texts_embedding_for_the_provision_picker(model_dir: Path) -> None:
    """``ForwardPass.embeddings``: a text of one window gets exactly what ``Encoder.embed`` gives it at the
    classifier's window length; a longer text the normalised mean of its windows' vectors. No space needed."""
    import torch

    from compliance.models.classifier import load

    clf = load(model_dir, device="cpu", bf16=False)
    result = clf.forward(TEXTS)
    assert result.vectors is None and result.embeddings is not None
    assert result.embeddings.shape == (len(TEXTS), clf.encoder.hidden_size)
    np.testing.assert_allclose(np.linalg.norm(result.embeddings, axis=1), 1.0, rtol=1e-5)
    short = [0, 1, 3]
    with torch.inference_mode():
        alone = clf.encoder.embed([TEXTS[i] for i in short], max_length=clf.config.max_length).numpy()
    np.testing.assert_allclose(result.embeddings[short], alone, rtol=1e-4, atol=1e-5)
    from compliance.runtime import mean_pool

    windows, _ = clf._windows([LONG])
    assert len(windows) > 1
    pooled = []
    with torch.inference_mode():
        for _, ids, mask in clf.window_batches(windows):
            hidden = clf.encoder.model(input_ids=ids, attention_mask=mask).last_hidden_state
            pooled.append(torch.nn.functional.normalize(mean_pool(hidden, mask), dim=-1).numpy())
    mean = np.concatenate(pooled).mean(axis=0)
    np.testing.assert_allclose(result.embeddings[2], mean / np.linalg.norm(mean), rtol=1e-4, atol=1e-5)


def test_a_space_of_another_pooling_gives_no_vectors(model_dir: Path) -> None:
    from dataclasses import replace

    from compliance.models.classifier import load

    clf = load(model_dir, device="cpu", bf16=False)
    space = _text_encoder(model_dir).space()
    assert space is not None
    assert clf.forward(TEXTS[:1], replace(space, pooling="cls")).vectors is None


def test_an_alert_search_after_an_audit_embeds_no_audited_paragraph_again(
    store: Any, model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compliance.app import audit_documents
    from compliance.app.audit import controls_space
    from compliance.linking.classifier_links import ClassifierLinkConfig
    from compliance.models.classifier import load
    from compliance.retrieval.encoding import TextEncoder
    from compliance.search import LawSearch
    from compliance.settings import reset_settings

    # the controls index embeds with the default classifier's encoder: this one
    monkeypatch.setenv("COMPLIANCE_MODEL_DIR", str(model_dir.parent))
    reset_settings()
    store.save_law(mini_gdpr())
    clf = load(model_dir, device="cpu", bf16=False)
    space = controls_space(clf)
    assert space is not None
    report = audit_documents(store, [EXAMPLES], clf, config=ClassifierLinkConfig(top_k=3))
    assert not report.failures and len(report.documents) == len(list(EXAMPLES.iterdir()))
    classified = sum(d.classified for d in report.documents)
    assert store.vector_spaces() == {space.id: classified}

    embedded: list[str] = []
    original = TextEncoder.encode_chunks

    def counting(self: TextEncoder, texts: Any) -> Any:
        embedded.extend(texts)
        self._enc.use_bf16 = False
        return original(self, texts)

    monkeypatch.setattr(TextEncoder, "encode_chunks", counting)
    search = LawSearch(store, index_dir=tmp_path / "idx")
    index = search.controls_index()
    controls = {d.id: d.text for d in index.documents.values()}
    with_vectors = set(store.paragraph_vectors(space.id, [int(i) for i in controls]))
    assert len(with_vectors) == classified
    # only the controls that were not classified (too short) are embedded by the index
    assert sorted(embedded) == sorted(t for i, t in controls.items() if int(i) not in with_vectors)
    assert len(embedded) < len(controls) / 10
    embedded.clear()
    hits = search.controls_for_law("gdpr", k=5)
    assert hits
    assert not set(embedded) & set(controls.values())  # the law's query only

    # the stored vectors are the index's own: a fresh index built without them ranks the same
    assert index.dense is not None
    fresh = LawSearch(store, index_dir=tmp_path / "fresh")
    fresh._stored_vectors = lambda space_id, ids: {}  # type: ignore[method-assign]
    rebuilt = fresh.controls_index().dense
    assert rebuilt is not None
    by_id = {d: i for i, d in enumerate(rebuilt.ids)}
    for doc_id in index.dense.ids[:50]:
        ours = index.dense.vectors[index.dense.owner == index.dense.ids.index(doc_id)]
        theirs = rebuilt.vectors[rebuilt.owner == by_id[doc_id]]
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)


@pytest.mark.usefixtures("shipped_models")
def test_the_shipped_classifier_embeds_the_controls_index_in_its_own_space() -> None:
    """The shipped classifier is adapters merged into the base encoder: its vectors are not the base encoder's, so
    its space must differ from the base encoder's, and the controls index (whose default encoder is then the
    shipped classifier's) must get the same vectors from a separate pass."""
    from compliance.app.audit import controls_space
    from compliance.models.classifier import load
    from compliance.retrieval.config import DenseConfig
    from compliance.retrieval.encoding import TextEncoder
    from compliance.retrieval.indexes import CONTROL_INDEX, index_config
    from compliance.runtime import classifier_dir, default_base_model_path

    clf = load(device="cpu", bf16=False)
    space = controls_space(clf)
    assert space is not None
    index_encoder = TextEncoder(index_config(CONTROL_INDEX).dense, device="cpu")
    index_encoder._enc.use_bf16 = False
    assert Path(index_encoder.source) == classifier_dir().resolve()
    assert index_encoder.space() == space
    base = TextEncoder(DenseConfig(model=str(default_base_model_path())), device="cpu").space()
    assert base is not None and base != space
    both = clf.forward(TEXTS[:2], space)
    assert both.vectors is not None
    separate, owner = index_encoder.encode_chunks(TEXTS[:2])
    for i, vectors in enumerate(both.vectors):
        np.testing.assert_allclose(vectors, separate[owner == i], rtol=1e-4, atol=1e-5)


def test_an_alert_run_after_an_audit_embeds_only_the_laws_passages(
    store: Any, model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole alert run, link decision included: with the decision on the classifier's encoder (the default),
    the candidates' vectors are the ones the audit stored, so the decision's encoder embeds the law's passages
    only; the scores are those of encoding the candidates again."""
    from compliance.alerts import engine
    from compliance.alerts.engine import run_alerts
    from compliance.app import audit_documents
    from compliance.linking.classifier_links import ClassifierLinkConfig
    from compliance.linking.decision import LinkDecisionConfig, LinkDecisionModel, train_link_decision
    from compliance.linking.pairs import make_graded_pairs
    from compliance.models.classifier import load
    from compliance.search import LawSearch
    from compliance.settings import reset_settings

    monkeypatch.setenv("COMPLIANCE_MODEL_DIR", str(model_dir.parent))
    reset_settings()
    law = mini_gdpr()
    store.save_law(law)
    clf = load(model_dir, device="cpu", bf16=False)
    audit_documents(store, [EXAMPLES], clf, config=ClassifierLinkConfig(top_k=3))
    pairs = make_graded_pairs([law], train_per_grade=4, heldout_per_grade=4, heldout_fraction=0.5, seed=3)
    train_link_decision(pairs=pairs, config=LinkDecisionConfig(max_steps=0), out_dir=tmp_path / "dec")
    decision = LinkDecisionModel.load(tmp_path / "dec")  # the default base: this (home) classifier's encoder
    assert decision.info["encoder"]["base_model"] == str(model_dir.resolve())
    texts = {p.text for p in store.iter_paragraphs()}
    seen: list[str] = []
    original = decision.encode

    def counting(batch: Any, **kwargs: Any) -> Any:
        seen.extend(batch)
        return original(batch, **kwargs)

    monkeypatch.setattr(decision, "encode", counting)
    search = LawSearch(store, index_dir=tmp_path / "idx")
    reused = run_alerts(store, "gdpr", decision=decision, search=search)
    assert reused.alerts and seen and not set(seen) & texts  # the passages only
    seen.clear()
    monkeypatch.setattr(engine, "_shared_space", lambda index, dec: None)
    again = run_alerts(store, "gdpr", decision=decision, search=search)
    assert set(seen) & texts  # without the stored vectors the candidates are encoded
    ours = {(a.paragraph_id, a.provision_key): a.score for a in reused.alerts}
    theirs = {(a.paragraph_id, a.provision_key): a.score for a in again.alerts}
    shared = set(ours) & set(theirs)
    assert len(shared) >= 0.8 * len(theirs)
    assert all(abs(ours[k] - theirs[k]) < 0.02 for k in shared)
