"""The models shipped inside the package: intact (checksums, sizes), used in an empty home, never written to."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import pytest

from compliance.artifacts import file_sha256

SHIPPED = Path(str(files("compliance.shipped")))
BREACH = "We notify the supervisory authority of a personal data breach within 72 hours."


def _sums(folder: Path) -> dict[str, str]:
    lines = (folder / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    return {name: digest for digest, name in (line.split("  ", 1) for line in lines if line)}


@pytest.mark.parametrize("name", ["gdpr-classifier", "link-decision"])
def test_shipped_files_match_their_checksums_and_stay_small(name: str) -> None:
    folder = SHIPPED / name
    sums = _sums(folder)
    files_there = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - {
        "SHA256SUMS"
    }
    assert set(sums) == files_there
    for rel, digest in sums.items():
        assert file_sha256(folder / rel) == digest, rel
        assert (folder / rel).stat().st_size < 2 * 1024 * 1024, rel
    assert sum((folder / rel).stat().st_size for rel in sums) < 5 * 1024 * 1024
    cfg = json.loads((folder / "config.json").read_text())
    assert cfg["kind"] == name and cfg["provenance"]


def test_the_shipped_classifier_is_the_compact_form_of_the_default_recipe() -> None:
    cfg = json.loads((SHIPPED / "gdpr-classifier" / "config.json").read_text())
    assert cfg["format_version"] == 4
    assert cfg["recipe"]["name"] == "r-compact" and cfg["recipe"]["teacher"] == "r"
    assert cfg["encoder_adapter"]["type"] == "lora" and cfg["encoder_adapter"]["lora"]["rank"] == 16
    assert len(cfg["provenance"]["training_data_sha256"]) == 64
    assert cfg["provenance"]["teacher_weights_checksum"]
    assert not (SHIPPED / "gdpr-classifier" / "encoder").exists()


def test_lookup_prefers_the_home_and_honours_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compliance.runtime import classifier_dir, decision_dir, default_classifier_dir, is_shipped
    from compliance.settings import reset_settings

    assert classifier_dir() == default_classifier_dir()  # the test default: shipped models off
    monkeypatch.setenv("COMPLIANCE_SHIPPED_MODELS", "true")
    reset_settings()
    assert classifier_dir() == SHIPPED / "gdpr-classifier" and is_shipped(classifier_dir())
    assert decision_dir() == SHIPPED / "link-decision"
    home_model = default_classifier_dir()
    home_model.mkdir(parents=True)
    (home_model / "config.json").write_text("{}")
    assert classifier_dir() == home_model and not is_shipped(home_model)


def test_empty_home_without_shipped_models_still_says_train() -> None:
    from compliance.app.classifier import load_classifier
    from compliance.errors import ModelNotFoundError

    with pytest.raises(ModelNotFoundError, match="compliance train"):
        load_classifier(device="cpu")


@pytest.mark.usefixtures("shipped_models")
def test_shipped_classifier_ranks_the_breach_article_in_an_empty_home() -> None:
    pytest.importorskip("torch")
    from compliance.app.classifier import load_classifier

    clf = load_classifier(device="cpu")
    assert clf.meta["path"] == str(SHIPPED / "gdpr-classifier")
    top = [s.article for s in clf.rank([BREACH], top_k=3)[0]]
    assert 33 in top, top


@pytest.mark.usefixtures("shipped_models")
def test_the_shipped_classifier_reads_the_laws_paragraphs_and_points_by_its_own_encoder() -> None:
    """The passage expert covers every article of the GDPR, its vectors are the shipped encoder's (a sample
    embedded again), and it moves a text towards the article whose point it restates."""
    pytest.importorskip("torch")
    from dataclasses import replace

    from compliance.models.classifier import load
    from compliance.models.passages import PassageExpert

    clf = load(SHIPPED / "gdpr-classifier", device="cpu", bf16=False)
    assert clf.uses_passages and clf.passages is not None and clf.config.passage_weight > 0
    assert set(clf.passages.articles()) == set(clf.labels)
    assert clf.meta["passages"]["count"] == len(clf.passages.keys)
    assert clf.meta["passages"]["recitals"] > 100 and any("/rec:" in k for k in clf.passages.keys)
    sample = PassageExpert(clf.passages.keys[::40], clf.passages.texts[::40]).embedded_by(clf.encoder)
    assert sample.vectors is not None and clf.passages.vectors is not None
    np = pytest.importorskip("numpy")
    np.testing.assert_allclose(sample.vectors, clf.passages.vectors[::40], atol=2e-3)
    # Art. 28(3)(g): the processor "deletes or returns all the personal data to the controller after the end of
    # the provision of services"; without the passages Art. 17 (erasure) ranks first
    text = (
        "On termination, the supplier hands back or deletes every copy of our personal data within a month."
    )
    with_passages = clf.predict_proba([text])[0]
    plain = replace(clf, config=replace(clf.config, passage_weight=0.0)).predict_proba([text])[0]
    at = clf.labels.index(28)
    assert with_passages[at] > plain[at] and int(np.argmax(with_passages)) == at


@pytest.mark.usefixtures("shipped_models")
def test_the_audits_provision_picker_takes_the_shipped_classifiers_own_passage_vectors(
    gdpr_xml: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The provision picker's passages are the passage expert's article passages: a first audit reads their
    vectors from the model directory and embeds none of them (it embedded 790 passages before, 4.6 s on two
    cores), and every pick is what the encoder's own vectors give."""
    pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    from compliance.app import audit
    from compliance.app.classifier import load_classifier
    from compliance.rules.formex import parse_formex

    monkeypatch.setattr(audit, "_PICKERS", {})  # a fresh process: no picker built yet
    clf = load_classifier(device="cpu")
    law = parse_formex(gdpr_xml.read_bytes(), source=str(gdpr_xml))
    embedded: list[int] = []
    embed = clf.encoder.embed
    monkeypatch.setattr(
        clf.encoder, "embed", lambda texts, *a, **k: (embedded.append(len(texts)), embed(texts, *a, **k))[1]
    )
    picker = audit.law_picker(clf, law.checksum, lambda: law)
    assert embedded == [] and picker._vectors is not None and clf.passages is not None
    n = len(picker.texts)
    assert n > 700 and picker.texts == list(clf.passages.texts[:n])
    np.testing.assert_array_equal(picker._vectors, clf.passages.vectors[:n])  # type: ignore[index]
    # another version of the law (its checksum differs): embedded by the encoder, as before
    monkeypatch.setattr(audit, "_PICKERS", {})
    again = audit.law_picker(clf, "another-version", lambda: law)
    assert embedded == [n] and again._vectors is not None
    np.testing.assert_allclose(again._vectors, picker._vectors, atol=5e-3)


@pytest.mark.usefixtures("shipped_models")
def test_shipped_classifier_ranks_the_infringed_article_above_the_fine() -> None:
    """A short enforcement summary names a fine and what it was for: the infringed article comes before the fines
    article (Art. 83), first where the summary says what was infringed (issue 13: Art. 83 was first, at 0.99, for a
    third of such summaries). The hospital summary's first article is Art. 34 (communicating a breach to the
    patients, 0.46) since session 32: a known miss, kept visible here; since session 33 the principle of integrity
    and confidentiality (Art. 5(1)(f), the umbrella weighing more in a text about a fine) was second and Art. 32
    third; since session 39 (NIS2's recitals as training text of Art. 32) Art. 33 is second, Art. 32 third and
    Art. 5 fourth: the infringed article is within the first three."""
    pytest.importorskip("torch")
    from compliance.app.classifier import load_classifier

    clf = load_classifier(device="cpu")
    access = "The DPA fined a controller EUR 5,000 for failing to reply to an access request."
    security = "The DPA fined a hospital because patient records were accessible without appropriate security measures."
    for text, infringed, within in ((access, {12, 15}, 1), (security, {5, 32}, 3)):
        ranked = clf.rank([text], top_k=5, explain=True)[0]
        articles = [s.article for s in ranked]
        place = next(i for i, a in enumerate(articles) if a in infringed)
        assert place < within and articles[0] != 83, articles
        assert 83 not in articles[: place + 1], articles
        components = ranked[place].components or {}
        assert components.get("consequence", 0) > 0, components  # part of its score came down from Art. 83
    assert 32 in [s.article for s in clf.rank([security], top_k=3)[0]]
    # without the consequence articles, the fine itself is what the access-request summary is ranked for
    scores = clf.predict_proba([access], consequence=False)[0]
    assert clf.labels[int(scores.argmax())] == 83


@pytest.mark.usefixtures("shipped_models")
def test_the_shipped_classifier_ranks_the_articles_a_text_cites(gdpr_xml: Path) -> None:
    """A policy that cites the GDPR's articles gets them first (the encoder and the lexical expert read the words
    around a citation, not the citation: "Articles 15 to 22" ranked Art. 15 third at 0.0003, a fine "for
    breaching Art. 5(1)(f) and Art. 32 GDPR" went to Art. 33 on the word "breaching"); the cited point is the
    provision target, a definition cited as "Art. 4(11)" read as Art. 4's point (11)."""
    pytest.importorskip("torch")
    from compliance.app.classifier import load_classifier
    from compliance.linking.provisions import ProvisionPicker
    from compliance.rules.formex import parse_formex

    clf = load_classifier(device="cpu")
    assert clf.config.citation_names == ("General Data Protection Regulation", "GDPR", "2016/679")
    texts = {
        "Data subjects may exercise their rights under Articles 15 to 22 of the GDPR by writing to us.": set(
            range(15, 23)
        ),
        "The company was fined for breaching Art. 5(1)(f) and Art. 32 GDPR after laptops were stolen.": {
            5,
            32,
        },
        "Where processing rests on legitimate interests (Article 6(1)(f) GDPR), the balancing test is kept.": {
            6
        },
        "Consent is recorded as defined in Article 4(11) GDPR.": {4},
    }
    ranked = clf.rank(list(texts), top_k=10)
    for (text, cited), scores in zip(texts.items(), ranked, strict=True):
        top = [s.article for s in scores]
        # every cited article within one place of the cited count: several cited articles share the citation's
        # half, so the text's own strong evidence keeps a place among them (Art. 12, how the rights are
        # exercised, before Articles 15 to 22); a text citing one article ranks it first
        assert cited <= set(top[: len(cited) + 1]) and (len(cited) > 1 or top[0] in cited), (text, top)
        assert all(bool(s.citation) == (s.article in cited) for s in scores), text
    # the citation is what lifts the cited articles; without it the breach-notification article (on the word
    # "breaching") came before the cited Art. 5 until the umbrella weighed more in a text about a fine (session 33)
    import numpy as np

    plain = clf.predict_proba(list(texts)[1:2], citation=False)[0]
    cited_scores = clf.predict_proba(list(texts)[1:2])[0]
    for article in (5, 32):
        assert cited_scores[clf.labels.index(article)] > plain[clf.labels.index(article)]
    order = [clf.labels[int(i)] for i in np.argsort(-plain)]
    assert order.index(5) < order.index(33), order[:5]
    picker = ProvisionPicker(parse_formex(gdpr_xml.read_bytes(), source=str(gdpr_xml)))
    cites = clf.citations(list(texts)) or []
    assert picker.cited_target(6, [c.key for c in cites[2]]).key == "art:6/par:1/pt:f"  # type: ignore[union-attr]
    assert picker.cited_target(4, [c.key for c in cites[3]]).key == "art:4/pt:11"  # type: ignore[union-attr]
    # a reference to another instrument or to the document itself is no citation of the GDPR
    assert clf.citations(["Article 5 of this Agreement and Article 21 of the NIS2 Directive apply."]) == [[]]


@pytest.mark.usefixtures("shipped_models")
def test_the_shipped_classifier_proposes_the_specific_article_not_the_umbrella() -> None:
    """A disposal control (hand-labelled set, ctl-018: Art. 32, 5): the shipped model ranked Art. 5 first on the
    mass its members gave it (its encoder probability about 0.01) until it learned the law in a policy's words
    (session 32); now Art. 32 comes first and Art. 5, on its members' mass, after it, and the audit proposes
    Art. 32 alone. Where the umbrella still comes first on its members' mass (an accuracy control, ctl-118: Art. 5,
    16; until session 52 an applicants' retention control, ctl-119, where the law's paragraphs now put Art. 17
    first; until session 34 a privacy-by-default control, ctl-127), the audit proposes the specific article and
    holds the umbrella for review — at a review band low enough for either to be proposed, the one the shipped band
    leaves both under."""
    pytest.importorskip("torch")
    from dataclasses import replace

    from compliance.app.classifier import load_classifier
    from compliance.linking.classifier_links import ClassifierLinkConfig, classify_paragraphs

    clf = load_classifier(device="cpu")
    text = (
        "Laptops and disks are wiped to a recognised standard or physically destroyed before disposal, "
        "and a destruction certificate is kept."
    )
    ranked = clf.rank([text], top_k=3, explain=True)[0]
    assert [s.article for s in ranked[:2]] == [32, 5], ranked
    assert (ranked[1].components or {}).get("umbrella", 0) > 0.5 and (ranked[1].components or {})["own"] < 0.1
    (links,) = classify_paragraphs(clf, [(1, text)], ClassifierLinkConfig(), progress=False)
    statuses = {s.article: st for s, st in links.linked}
    assert statuses[32] == "proposed" and statuses[5] == "needs-review", statuses

    default = (
        "Customer addresses are validated at entry and incorrect data is corrected as soon as we learn of it."
    )
    ranked = clf.rank([default], top_k=3, explain=True)[0]
    assert ranked[0].article == 5 and (ranked[0].components or {}).get("umbrella", 0) > 0.5, ranked
    assert ranked[1].article == 16, ranked  # the right to rectification
    specific = ranked[1].article
    low, _ = clf.config.review_band
    clf.config = replace(clf.config, review_band=(low, min(s.score for s in ranked[:2]) - 0.01))
    (links,) = classify_paragraphs(clf, [(1, default)], ClassifierLinkConfig(), progress=False)
    statuses = {s.article: st for s, st in links.linked}
    assert statuses[specific] == "proposed" and statuses[5] == "needs-review", statuses
    (before,) = classify_paragraphs(
        clf, [(1, default)], ClassifierLinkConfig(own_evidence=False), progress=False
    )
    assert {s.article: st for s, st in before.linked}[5] == "proposed"


@pytest.mark.usefixtures("shipped_models")
def test_the_shipped_classifier_proposes_only_what_the_text_bears_out(gdpr_xml: Path) -> None:
    """The shipped link decision was calibrated on the shipped classifier's encoder, so its drop edge is the
    corroboration level. Off-topic and false-friend paragraphs the classifier proposes (a software manual's pointer
    → Art. 2; a password rule → Art. 35 on the word "list", ranked on Art. 32 in session 34 only) fall below
    it with the article's own passages and are kept for review; a breach-notification control stays proposed."""
    pytest.importorskip("torch")
    from compliance.app.audit import corroboration
    from compliance.app.classifier import load_classifier
    from compliance.linking.classifier_links import (
        ClassifierLinkConfig,
        classify_paragraphs,
        corroborate_links,
    )
    from compliance.rules.formex import parse_formex
    from compliance.rules.passages import provision_passages

    clf = load_classifier(device="cpu")
    level = corroboration(clf)
    cfg = json.loads((SHIPPED / "link-decision" / "config.json").read_text())
    assert level == pytest.approx(cfg["band"]["lower"])
    law = parse_formex(gdpr_xml.read_bytes(), source=str(gdpr_xml))
    texts = {
        "password": "Passwords have at least 14 characters and are checked against a list of known breached "
        "passwords when they are set. Periodic forced password changes are not used; passwords are changed "
        "when compromise is suspected.",
        "manual": "For an example of the syntax, check the pkix.asn file distributed with the library.",
        "breach": BREACH,
    }
    results = classify_paragraphs(
        clf, list(enumerate(texts.values())), ClassifierLinkConfig(), progress=False
    )
    band = clf.config.review_band
    statuses = {}
    for name, res in zip(texts, results, strict=True):
        top = res.linked[0][0].article
        if name == "password":
            # since session 34 (NIS2's security measures as Art. 32's text) Art. 32 is among the first two; since
            # session 35 (no function words or numbers in the lexical expert) "list" and "change" weigh more
            # against fewer shared words and Art. 35 may rank first again, but it is never proposed
            assert 32 in [s.article for s, _ in res.linked[:2]], res.linked
            if top != 32:
                passages, _ = provision_passages(law, [f"art:{top}"], 120)
                cosine = float((clf.encoder.embed(passages).numpy() @ res.embedding).max())
                checked = corroborate_links(res, band, {top: cosine}, level)
                assert checked.linked[0][1] != "proposed", checked.linked
            continue
        assert res.linked[0][1] == "proposed", (name, res.linked)  # the classifier alone proposes both
        passages, _ = provision_passages(law, [f"art:{top}"], 120)
        cosine = float((clf.encoder.embed(passages).numpy() @ res.embedding).max())
        checked = corroborate_links(res, band, {top: cosine}, level)
        statuses[name] = (top, checked.linked[0][1], (checked.linked[0][0].components or {})["text_cosine"])
    assert statuses["manual"][:2] == (2, "needs-review") and statuses["manual"][2] < level
    assert statuses["breach"][:2] == (33, "proposed") and statuses["breach"][2] > 0.5


@pytest.mark.usefixtures("shipped_models")
def test_compliance_map_answers_in_an_empty_home() -> None:
    pytest.importorskip("torch")
    from click.testing import CliRunner

    from compliance.cli import cli

    result = CliRunner().invoke(cli, ["-q", "map", "--text", BREACH, "--top-k", "3"])
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout.strip().splitlines()[-1])
    assert 33 in [a["article"] for a in row["articles"]]


@pytest.mark.usefixtures("shipped_models")
def test_shipped_link_decision_loads_over_the_classifier_encoder() -> None:
    pytest.importorskip("sentence_transformers")
    from compliance.alerts.engine import load_decision_model

    model = load_decision_model()
    cfg = json.loads((SHIPPED / "link-decision" / "config.json").read_text())
    assert model.threshold == pytest.approx(cfg["threshold"]) and model.lower < model.threshold
    assert cfg["encoder"]["source"] == "base"
    # calibrated on the shipped classifier's fine-tuned encoder, pinned by its adapter file's checksum
    from compliance.artifacts import weights_sha256

    assert cfg["encoder"]["base_model"] == "shipped:gdpr-classifier"
    assert cfg["encoder"]["base_model_sha256"] == weights_sha256(SHIPPED / "gdpr-classifier")
    scores = model.score_pairs(
        ["The controller shall notify a personal data breach to the supervisory authority."],
        ["Notification of a personal data breach to the supervisory authority"],
    )
    assert scores[0] > model.lower


@pytest.mark.usefixtures("shipped_models")
def test_a_link_whose_best_provision_obliges_public_bodies_only_is_held_for_review(tmp_path: Path) -> None:
    """A marketing call list ranked on Art. 35 fits best the authority's lists of 35(5)/(6) (and, until session 34,
    an MFA rule ranked on Art. 58 its (1)(e), the supervisory authority's power "to obtain … access to all personal
    data"). A policy implements neither: the audit holds such a link for review and says why; a breach-notification
    control stays proposed."""
    pytest.importorskip("torch")
    from compliance.app import audit_documents
    from compliance.app.classifier import load_classifier
    from compliance.app.review import held_for_review
    from compliance.linking.classifier_links import ClassifierLinkConfig
    from compliance.store import Store

    store = Store(f"sqlite:///{tmp_path / 'audit.db'}")
    store.upgrade()
    folder = tmp_path / "policies"
    folder.mkdir()
    mfa = (
        "Multi-factor authentication is required for all remote access, all cloud administration consoles and "
        "the administration functions of the customer portal."
    )
    calls = (
        "Before a sales campaign by telephone, the call list is screened against the national do-not-call "
        "register and our own list of people who asked not to be called."
    )
    (folder / "rules.md").write_text(f"# Rules\n\n{mfa}\n\n{calls}\n\n{BREACH}\n", encoding="utf-8")
    clf = load_classifier(device="cpu")
    held, kept = {}, {}
    for config in (ClassifierLinkConfig(), ClassifierLinkConfig(propose_public_duties=True)):
        report = audit_documents(store, [folder], clf, config=config, reclassify=True)
        paragraphs = {p.id: p.text for p in store.iter_paragraphs()}
        top = {
            paragraphs[link.paragraph_id]: link
            for link in store.list_links(run_id=report.run_id)
            if link.rank == 1
        }
        (held if not config.propose_public_duties else kept).update(top)
    # until session 34 the MFA rule ranked on Art. 58 (the authority's power "to obtain … access"); NIS2's security
    # measures as Art. 32's training text put it where it belongs
    assert held[mfa].evidence["article"] == 32 and held[mfa].status == "proposed"
    for text, article in ((calls, 35),):
        link = held[text]
        assert link.evidence["article"] == article and link.evidence["provision"]["public_bodies"] is True
        assert link.status == "needs-review" and "obliges public bodies only" in (
            held_for_review(link.evidence) or ""
        )
        assert kept[text].status == "proposed"  # the rule, not the scores, held it
    assert held[BREACH].status == "proposed" and "public_bodies" not in held[BREACH].evidence["provision"]


@pytest.mark.usefixtures("shipped_models")
def test_the_lexical_experts_terms_are_part_of_a_suggestions_version() -> None:
    """The shipped lexical expert reads no function words and no numbers (session 35): the suggestions it makes
    carry another version than those of the same model reading terms as before, so `audit --rescore` compares them."""
    pytest.importorskip("torch")
    from compliance.app.audit import suggestion_version
    from compliance.app.classifier import load_classifier
    from compliance.linking.classifier_links import ClassifierLinkConfig
    from compliance.models.lexical import LexicalArticleScorer

    clf = load_classifier(device="cpu")
    assert clf.lexical is not None
    assert clf.lexical.analysis == {"stopwords": "en_plus", "numbers": False}
    now = suggestion_version(clf, ClassifierLinkConfig())
    clf.lexical = LexicalArticleScorer(clf.lexical.documents, k1=clf.lexical.k1, b=clf.lexical.b)
    before = suggestion_version(clf, ClassifierLinkConfig())
    assert now != before and now.split("/")[0] == before.split("/")[0]


@pytest.mark.usefixtures("shipped_models")
def test_the_law_priors_reading_of_member_state_law_is_part_of_a_suggestions_version() -> None:
    """The shipped prior reads "Member State law" as law (session 62): its suggestions carry another version than
    the same model's under the prior stored before, so `audit --rescore` compares them."""
    pytest.importorskip("torch")
    from compliance.app.audit import suggestion_version
    from compliance.app.classifier import load_classifier
    from compliance.linking.classifier_links import ClassifierLinkConfig

    clf = load_classifier(device="cpu")
    assert clf.uses_prior and clf.meta["recipe"]["law_prior"]["member_state_law"] == "law"
    now = suggestion_version(clf, ClassifierLinkConfig())
    clf.meta["recipe"]["law_prior"].pop("member_state_law")
    before = suggestion_version(clf, ClassifierLinkConfig())
    assert now != before and now.split("/")[0] == before.split("/")[0]


@pytest.mark.usefixtures("shipped_models")
def test_every_number_of_the_scoring_is_part_of_a_suggestions_version() -> None:
    """A scoring refreshed without retraining (the law prior's values, an expert's weight) leaves the weights'
    checksum as it was: its suggestions still carry another version, so `audit --rescore` compares them; the batch
    size, which changes no score, does not change it."""
    pytest.importorskip("torch")
    from dataclasses import replace

    from compliance.app.audit import suggestion_version
    from compliance.app.classifier import load_classifier
    from compliance.linking.classifier_links import ClassifierLinkConfig

    clf = load_classifier(device="cpu")
    now = suggestion_version(clf, ClassifierLinkConfig())
    config = clf.config
    assert config.label_prior is not None and config.lexical_weight > 0
    prior = list(config.label_prior)
    prior[0], prior[1] = prior[1], prior[0]
    changed = {
        "label_prior": tuple(prior),
        "lexical_weight": config.lexical_weight + 0.5,
        "max_length": config.max_length // 2,
        "citation_weight": config.citation_weight + 1.0,
    }
    for name, value in changed.items():
        clf.config = replace(config, **{name: value})
        other = suggestion_version(clf, ClassifierLinkConfig())
        assert other != now and other.split("/")[0] == now.split("/")[0], name
    clf.config = replace(config, batch_size=config.batch_size * 2)
    assert suggestion_version(clf, ClassifierLinkConfig()) == now
