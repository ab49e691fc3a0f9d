"""The model card (MODEL_CARD.md) written next to a trained classifier."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from compliance.models.classifier import ArticleClassifier

__all__ = ["model_card"]


def _fmt(d: dict[str, Any] | None) -> str:
    if not d:
        return "n/a"
    return ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in d.items())


def _lexical_terms(analysis: dict[str, Any]) -> str:
    """How the lexical expert reads terms, for the scoring line (nothing for the analysis of earlier models)."""
    from compliance.models.lexical import LexicalArticleScorer

    if analysis == LexicalArticleScorer.DEFAULT_ANALYSIS:
        return ""
    stop = {"en": "bm25s' 33 English stop words", "en_plus": "NLTK's 179 English stop words"}
    parts = [f"without {stop.get(str(analysis.get('stopwords')), str(analysis.get('stopwords')))}"]
    if not analysis.get("numbers", True):
        parts.append("nor tokens without a letter")
    return "; terms " + " ".join(parts)


def model_card(clf: ArticleClassifier, metrics: dict[str, Any]) -> str:
    """Markdown model card: purpose, base model, recipe, data provenance, curves, calibration, held-out figures."""
    meta = clf.meta
    prov = meta.get("provenance", {})
    cal = metrics.get("calibration", {})
    lines = [
        "# GDPR article classifier",
        "",
        "Ranks the 99 articles of Regulation (EU) 2016/679 (GDPR) for a paragraph of text (a policy, a control,",
        "a description of facts). Scores are temperature-calibrated probabilities over the 99 articles.",
        "",
        "## Intended use and limits",
        "",
        "Suggests candidate articles for a compliance officer to review. It is trained on the text of the",
        "regulation (articles, titles and, for `-r` recipes, recitals)"
        + (
            " and other acts' official text (parallel provisions, hard negatives: below)"
            if prov.get("parallel_articles") or prov.get("negatives_by_article")
            else ""
        )
        + (f" plus extra labelled examples ({prov.get('extra')})" if prov.get("extra") else "")
        + ", not on annotated policies:",
        "expect it to miss implicit links and to be over-confident on text that looks like none of the",
        f"articles. Scores in the review band {cal.get('review_band')} need a human decision; below the band",
        "the model abstains.",
        "",
        "## Model",
        "",
        f"- base encoder: {meta.get('base_model')}",
        f"- recipe: `{meta.get('recipe', {}).get('name')}`; package version {meta.get('package_version')}, "
        f"torch {meta.get('torch_version')}, trained {meta.get('trained_at')}",
        "- head: cosine similarity to 99 article prototypes (warm-started from mean training embeddings) with",
        "  a learned scale; mean pooling; long texts are scored in overlapping windows whose "
        + (
            "temperature-scaled distributions are averaged"
            if clf.config.window_pooling == "probabilities"
            else "logits are averaged"
        ),
        (
            "- encoder: LoRA adapters and layer vectors over the base encoder (`adapter.safetensors`), merged at load"
            if meta.get("encoder_adapter") or (meta.get("recipe") or {}).get("compact")
            else "- encoder weights for reuse (dense retrieval, mean pooling + L2 norm): "
            f"`{clf.meta.get('encoder_subdir', 'encoder')}/`"
        ),
        "- scoring ensemble: log p(encoder, temperature-scaled)"
        + (" + log prior(article), read from the law" if clf.uses_prior else "")
        + (
            f" + {clf.config.lexical_weight:g} · log p(BM25 over each article's training text, `lexical.json`"
            + (_lexical_terms(clf.lexical.analysis) if clf.lexical is not None else "")
            + ")"
            if clf.uses_lexical
            else ""
        )
        + (
            f" + {clf.config.passage_weight:g} · the cosine of the text with each article's closest paragraph or"
            f" point of the law ({len(clf.passages.keys if clf.passages else ())} passages embedded by"
            " this encoder, `passages.json`; the held-out QA and QR figures below are without it, since the"
            " held-out sentences are among the passages)"
            if clf.uses_passages
            else ""
        )
        + ", renormalised"
        + (
            f"; then consequence articles pass {clf.config.consequence_weight:g} of their score down to the"
            " articles they sanction: "
            + "; ".join(f"Art. {a} → {len(m)} articles" for a, m in (clf.config.consequences or ()))
            if clf.uses_consequences
            else ""
        )
        + (
            "; a text about a sanction (a consequence article among its first "
            f"{clf.config.consequence_top_k} articles) is also read clause by clause"
            if clf.config.consequences and clf.config.consequence_clauses
            else ""
        )
        + (
            f"; then principle umbrellas (weight {clf.config.umbrella_weight:g}): "
            + "; ".join(f"Art. {a} ← {', '.join(map(str, m))}" for a, m in (clf.config.umbrellas or ()))
            if clf.uses_umbrellas
            else ""
        )
        + (
            f" (weight {clf.config.sanction_umbrella_weight:g} in a text about a sanction)"
            if clf.config.consequences
            and clf.config.sanction_umbrella_weight is not None
            and clf.uses_umbrellas
            else ""
        )
        + (
            f"; last, the articles a text cites by the act's name ({', '.join(clf.config.citation_names or ())}) "
            f"receive {clf.config.citation_weight:g} of its score"
            if clf.uses_citations
            else ""
        ),
        f"- law prior: {json.dumps(meta.get('law_prior'))}",
        "",
        "## Training data (provenance)",
        "",
        f"- law: {json.dumps(prov.get('law'))}",
        f"- recital map sha256: `{prov.get('recital_map_checksum')}` ({prov.get('recital_pairs')} pairs)",
        f"- counts: {json.dumps(prov.get('counts'))}",
        f"- extra supervision: {prov.get('extra') or 'none'}",
        *([f"- other acts: {json.dumps(prov.get('acts'))}"] if prov.get("acts") else []),
        *(
            [
                "- parallel provisions (GDPR article: units of another act's articles that state it, by the same "
                f"title or as the recipe maps them): {json.dumps(prov.get('parallel_articles'))}"
            ]
            if prov.get("parallel_articles")
            else []
        ),
        *(
            [
                "- hard negatives (GDPR article: sentences of other fields penalised on it): "
                f"{json.dumps(prov.get('negatives_by_article'))}"
            ]
            if prov.get("negatives_by_article")
            else []
        ),
        *(
            [
                "- lexical provisions (GDPR article: units of other acts' provisions its lexical document also "
                f"indexes; the encoder is not trained on them): {json.dumps(prov.get('lexical_articles'))}"
            ]
            if prov.get("lexical_articles")
            else []
        ),
        *(
            [
                "- lexical recitals (act: article of that act: the recitals explaining it, indexed with the GDPR "
                f"article its units are mapped to): {json.dumps(prov.get('lexical_recitals'))}"
            ]
            if prov.get("lexical_recitals")
            else []
        ),
        *(
            [
                "- parallel recitals (act: article of that act: the recitals explaining it, training text of the "
                f"GDPR article its units are mapped to): {json.dumps(prov.get('parallel_recitals'))}"
            ]
            if prov.get("parallel_recitals")
            else []
        ),
        f"- data recipe: {json.dumps(prov.get('data_config'))}",
        f"- training examples sha256: `{prov.get('training_data_sha256')}`; base encoder weights sha256: "
        f"`{prov.get('base_model_sha256')}`",
        "",
        "## Recipe",
        "",
        "```json",
        json.dumps(meta.get("recipe"), indent=2),
        "```",
        "",
        "## Convergence",
        "",
        "| member | step | epoch | loss | acc | elapsed s |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for rec in metrics.get("train_curve", []):
        lines.append(
            f"| {rec.get('member', 1)} | {rec['step']} | {rec['epoch']} | {rec['loss']:.3f} | {rec['acc']:.3f} "
            f"| {rec['elapsed_s']} |"
        )
    soup = metrics.get("soup") or {"members": 1}
    lines += [
        "",
        f"- held-out calibration set before fine-tuning (warm-started head): "
        f"{_fmt(metrics.get('heldout_before', {}).get('calibration'))}",
    ]
    for ev in metrics.get("epoch_eval", []):
        member = f"member {ev['member']}, " if soup["members"] > 1 and "member" in ev else ""
        lines.append(f"- {member}after epoch {ev['epoch']}: {_fmt(ev.get('calibration'))}")
    if soup["members"] > 1:
        lines.append(
            f"- model soup: the weights of {soup['members']} fine-tuning runs (seeds "
            f"{', '.join(str(x) for x in soup['seeds'])}) averaged; the figures below are the soup's"
        )
    for st in metrics.get("tapt", []):
        lines.append(
            f"- task-adaptive stage {st['stage']['task']}/{st['stage']['level']}: {_fmt({k: v for k, v in st.items() if k != 'stage'})}"
        )
    after = metrics.get("heldout_after", {})
    final = metrics.get("heldout_final", {})
    lines += [
        "",
        "## Calibration",
        "",
        f"Temperature {cal.get('temperature', 1.0):.3f} fitted on {cal.get('n')} held-out texts; expected",
        f"calibration error {cal.get('ece_before', 0):.3f} before, {cal.get('ece_after', 0):.3f} after,",
        f"{cal.get('ece_final', cal.get('ece_after', 0)):.3f} for the full scoring ensemble.",
        "",
        "## Held-out figures (never trained on)",
        "",
        f"- QA (held-out article sentences): encoder {_fmt(after.get('qa'))}; ensemble {_fmt(final.get('qa'))}",
        f"- QR (held-out recitals): encoder {_fmt(after.get('qr'))}; ensemble {_fmt(final.get('qr'))}",
        "",
        "Full evaluation (GDPRhub development texts, control set, baselines): `compliance evaluate`.",
        "",
        f"Timing: {_fmt(metrics.get('timing'))}",
        "",
    ]
    return "\n".join(lines)
