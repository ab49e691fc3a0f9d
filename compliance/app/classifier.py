"""Classifier use cases: load (or first train) the GDPR article classifier, train one, map texts to articles.

The ``map`` contract (the CLI's JSONL and the HTTP API's JSON use it; external evaluation depends on it): one
result per input, in input order, ``{"id": ..., "articles": [{"article": 32, "title": "Security of processing",
"score": 0.81}, ...]}`` ranked by score, scores rounded to 4 decimals.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compliance.errors import ConfigurationError

if TYPE_CHECKING:  # pragma: no cover
    from compliance.evaluation.run import EvaluationReport
    from compliance.models.classifier import ArticleClassifier
    from compliance.models.reviews import ReviewedItem
    from compliance.rules.corpus import Law
    from compliance.store import Store

__all__ = [
    "MapInputError",
    "TrainRequest",
    "calibrate_classifier_from_reviews",
    "evaluate_classifier",
    "gdpr_training_inputs",
    "load_classifier",
    "map_texts",
    "read_map_inputs",
    "train_classifier",
]


def gdpr_training_inputs() -> tuple[Law, dict[int, list[int]]]:
    """The project's own GDPR parse and its article → recital map (law pack ``gdpr``)."""
    from compliance.rules import get_pack, load_pack_law

    return load_pack_law("gdpr"), get_pack("gdpr").recital_map()


@dataclass(frozen=True)
class TrainRequest:
    """What to train: a named recipe, its overrides, and where the data and the model go.

    Attributes:
        recipe: ``r`` (the default), ``r-fast``, ``plain``, ``rsp-r``, ``mca-r``, ``rsp-mca-r``, ``r-long`` …
        overrides: recipe fields to change (``epochs``, ``min_k``, ``freeze_layers``, ``soup``, ``seed``,
            ``data_seed``, ``base_model``, ``lexical_weight``); None values are ignored.
        out_dir: the model directory (default ``<model_dir>/gdpr-classifier``).
        extra_path: extra supervision, JSONL ``{"id","text","articles":[...]}``.
        gdprhub_train: add the training half of the GDPRhub development set (shared data) as extra supervision.
        prior_weight: with extra supervision, weight of its article frequencies as the label prior.
        law_prior: score with the article-applicability prior read from the law.
        umbrellas: score with the principle umbrellas.
        consequences: score with the consequence articles (Art. 83 passing mass to the articles it fines for).
        citations: score with the articles a text cites by the act's name (``Art. 30 GDPR``).
        device: ``auto``, ``cpu``, ``cuda`` (default: ``COMPLIANCE_DEVICE``).
        bf16: force bf16 autocast on or off (default: where the hardware supports it).
        with_reviews: add the reviewed GDPR links of the database (accepted: positives, rejected: negatives,
            :func:`reviewed_items`) to the recipe's data.
        database_url: the database to read reviews from (default: the configured one).
    """

    recipe: str = "r"
    overrides: Mapping[str, Any] | None = None
    out_dir: Path | None = None
    extra_path: Path | None = None
    gdprhub_train: bool = False
    prior_weight: float = 0.0
    law_prior: bool = True
    umbrellas: bool = True
    consequences: bool = True
    citations: bool = True
    device: str | None = None
    bf16: bool | None = None
    with_reviews: bool = False
    database_url: str | None = None


def train_classifier(request: TrainRequest | None = None) -> dict[str, Any]:
    """Train (and calibrate, and save) a GDPR article classifier; returns the training summary.

    Raises:
        ConfigurationError: unknown recipe, both ``extra_path`` and ``gdprhub_train``, no GDPRhub file.
    """
    from compliance.models.training import get_recipe, train
    from compliance.runtime import default_classifier_dir

    request = request or TrainRequest()
    chosen = get_recipe(request.recipe, **dict(request.overrides or {}))
    if not request.law_prior:
        chosen = replace(chosen, law_prior=None)
    if not request.umbrellas:
        chosen = replace(chosen, umbrella=None)
    if not request.consequences:
        chosen = replace(chosen, consequence=None)
    if not request.citations:
        chosen = replace(chosen, citation=None)
    target = request.out_dir or default_classifier_dir()
    law, recital_map = gdpr_training_inputs()
    extra_path = request.extra_path
    reviews = []
    if request.with_reviews:
        from compliance.app.store import open_store

        reviews = reviewed_items(open_store(request.database_url))
        if not reviews:
            raise ConfigurationError("--with-reviews: no reviewed GDPR links in the database yet")
    with tempfile.TemporaryDirectory() as tmp:
        if request.gdprhub_train:
            if extra_path is not None:
                raise ConfigurationError(
                    "use either extra supervision or the GDPRhub training half, not both"
                )
            from compliance.evaluation.queries import gdprhub_path, load_gdprhub, write_gdprhub_train

            hub = gdprhub_path()
            if hub is None:
                raise ConfigurationError("--gdprhub-train: no GDPRhub file; set COMPLIANCE_SHARED_DATA")
            extra_path = Path(tmp) / "gdprhub_train.jsonl"
            write_gdprhub_train(load_gdprhub(hub), extra_path)
        result = train(
            chosen,
            law,
            recital_map,
            out_dir=target,
            extra_path=extra_path,
            device=request.device,
            bf16=request.bf16,
            prior_weight=request.prior_weight,
            reviews=reviews,
        )
    m = result.metrics
    return {
        "path": str(result.path),
        "recipe": chosen.name,
        "examples": len(result.data.train),
        "train_seconds": m["timing"]["train_seconds"],
        "timing": {
            k: m["timing"].get(k)
            for k in (
                "precision",
                "device",
                "cpu_capability",
                "torch_threads",
                "seconds_per_step",
                "batch_size",
            )
        },
        "final_loss": m["train_curve"][-1]["loss"] if m["train_curve"] else None,
        "temperature": m["calibration"]["temperature"],
        "ece_before": m["calibration"]["ece_before"],
        "ece_after": m["calibration"]["ece_after"],
        "ece_final": m["calibration"]["ece_final"],
        "heldout": m["heldout_after"],
        "heldout_final": m["heldout_final"],
        "reviews": result.data.provenance.get("reviews"),
    }


def load_classifier(
    model_path: Path | None = None,
    *,
    device: str | None = None,
    train_if_missing: bool = False,
    on_train: Callable[[Path], None] | None = None,
) -> ArticleClassifier:
    """The classifier at ``model_path``; by default ``<model_dir>/gdpr-classifier`` when one was trained there,
    else the default classifier shipped with the package (:func:`compliance.runtime.classifier_dir`).

    Args:
        model_path: a classifier directory.
        device: ``auto``, ``cpu``, ``cuda`` (default: ``COMPLIANCE_DEVICE``).
        train_if_missing: train the default recipe there first when no model exists, not even the shipped one
            (takes minutes).
        on_train: called with the path just before such a training starts (to tell the user).

    Raises:
        ModelNotFoundError: no model there (and ``train_if_missing`` not set).
    """
    from compliance.models.classifier import load
    from compliance.runtime import classifier_dir

    path = model_path or classifier_dir()
    if train_if_missing and not (path / "config.json").is_file():
        if on_train is not None:
            on_train(path)
        train_classifier(TrainRequest(out_dir=path, device=device))
    return load(path, device=device)


@dataclass(frozen=True, slots=True)
class MapInputError:
    """A ``map`` input line that was skipped, and why (reported on stderr; the run goes on)."""

    source: str
    line: int
    error: str
    code: str = ConfigurationError.code

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.error}"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (use a string or a finite number)")


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


def _check_text(value: Any, what: str) -> str | None:
    if isinstance(value, str) and _has_surrogate(value):
        return f"the {what} contains a lone surrogate (\\ud800-\\udfff): not valid Unicode text"
    return None


def read_map_inputs(
    lines: Iterable[bytes | str], source: str = "input"
) -> Iterator[tuple[Any, str] | MapInputError]:
    """Parse ``map`` input lines (JSONL ``{"id": ..., "text": ...}``): one row or one error per non-blank line.

    The policy for bad input: a line that is not UTF-8, not a JSON object, has no string ``text``, holds a lone
    surrogate, or an ``id`` that is not a string, number (finite) or null yields a :class:`MapInputError` and
    the next line is read; the caller reports it and exits non-zero at the end. ``NaN``/``Infinity`` are refused
    so that every echoed id is valid JSON. A missing id becomes the line number.
    """
    import json
    import math

    for n, raw in enumerate(lines, 1):
        if isinstance(raw, bytes):
            try:
                line = raw.decode("utf-8-sig" if n == 1 else "utf-8")
            except UnicodeDecodeError as e:
                yield MapInputError(source, n, f"not UTF-8 text (byte {e.start}); save the input as UTF-8")
                continue
        else:
            line = raw
        if not line.strip():
            continue
        try:
            row = json.loads(line, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as e:
            yield MapInputError(source, n, f"not a JSON line: {e}")
            continue
        if not isinstance(row, dict) or not isinstance(row.get("text"), str):
            yield MapInputError(source, n, "expected an object with a string 'text'")
            continue
        row_id = row.get("id", n)
        if isinstance(row_id, float) and not math.isfinite(row_id):  # pragma: no cover - refused above
            yield MapInputError(source, n, "the id must be a finite number")
            continue
        if row_id is not None and not isinstance(row_id, (str, int, float)):
            yield MapInputError(source, n, "the id must be a string, a number or null")
            continue
        problem = _check_text(row["text"], "text") or _check_text(row_id, "id")
        if problem is not None:
            yield MapInputError(source, n, problem)
            continue
        yield row_id, row["text"]


def map_texts(
    classifier: ArticleClassifier,
    rows: Iterable[tuple[Any, str]],
    *,
    top_k: int = 10,
    batch_size: int = 64,
) -> Iterator[dict[str, Any]]:
    """Rank GDPR articles for ``(id, text)`` rows, lazily in batches; one result per row, in input order."""
    if top_k < 1 or top_k > 99:
        raise ConfigurationError(f"top_k must be in 1..99, got {top_k}")

    def ranked(batch: list[tuple[Any, str]]) -> Iterator[dict[str, Any]]:
        scored = classifier.rank([t for _, t in batch], top_k=top_k)
        for (row_id, _), scores in zip(batch, scored, strict=True):
            yield {
                "id": row_id,
                "articles": [
                    {"article": s.article, "title": s.title, "score": round(s.score, 4)} for s in scores
                ],
            }

    batch: list[tuple[Any, str]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= batch_size:
            yield from ranked(batch)
            batch = []
    if batch:
        yield from ranked(batch)


def evaluate_classifier(
    model_path: Path | None = None,
    *,
    baselines_only: bool = False,
    sets: Sequence[str] = (),
    query_files: Sequence[Path] = (),
    baselines: Sequence[str] = ("prior", "bm25", "zero-shot"),
    fusion_weights: Sequence[float] = (),
    controls_path: Path | None = None,
    limit: int | None = None,
    on_note: Callable[[str], None] | None = None,
    progress: Callable[[str], None] | None = None,
) -> EvaluationReport:
    """Seed-000 metrics of a classifier beside the frequency prior, BM25 and the zero-shot encoder.

    Args:
        model_path: the classifier (default ``<model_dir>/gdpr-classifier``, else the shipped one; when neither
            exists, only the baselines are evaluated and ``on_note`` says so).
        baselines_only: evaluate only the baselines.
        sets: built-in query sets (``qa``, ``qr``, ``gdprhub``, ``controls``); default: all of them, or none when
            ``query_files`` are given.
        query_files: the user's own labelled JSONL ``{"id","text","articles":[...]}``, one set per file.
        baselines: which baselines to evaluate beside the model.
        fusion_weights: also report classifier + w·log(GDPRhub prior) for these weights.
        controls_path: another control set for ``controls``.
        limit: at most this many queries per set.
        on_note: told why the model was left out.
        progress: told which set and ranker is being evaluated.
    """
    from compliance.evaluation.run import BUILT_IN_SETS, evaluate
    from compliance.runtime import classifier_dir

    path: Path | None = None
    if not baselines_only:
        path = model_path or classifier_dir()
        if model_path is None and not (path / "config.json").is_file():
            if on_note is not None:
                on_note(f"no model at {path}: evaluating baselines only (train one with `compliance train`)")
            path = None
    law, recital_map = gdpr_training_inputs()
    return evaluate(
        law,
        recital_map,
        model_path=path,
        controls=controls_path,
        sets=tuple(sets) or (() if query_files else BUILT_IN_SETS),
        query_files=tuple(query_files),
        baselines=tuple(baselines),
        fusion_weights=tuple(fusion_weights),
        limit=limit,
        progress=progress,
    )


def calibrate_classifier_from_reviews(
    model_path: Path | None = None,
    *,
    database_url: str | None = None,
    device: str | None = None,
    write: bool = True,
) -> dict[str, Any]:
    """Refit the classifier's temperature and review band on the reviewed GDPR links of the database
    (:func:`compliance.models.review_calibration.calibrate_from_reviews`); returns the before/after summary.

    Raises:
        ConfigurationError: too few reviewed paragraphs.
        ModelNotFoundError: no classifier at ``model_path``.
    """
    import shutil

    from compliance.app.store import open_store
    from compliance.models.review_calibration import calibrate_from_reviews
    from compliance.runtime import classifier_dir, default_classifier_dir, is_shipped

    path = model_path or classifier_dir()
    items = reviewed_items(open_store(database_url))
    if write and is_shipped(path):
        # the shipped model is read-only: the recalibrated copy goes to the model directory, where it takes
        # precedence from now on
        target = default_classifier_dir()
        if target.exists():
            raise ConfigurationError(f"{target} exists but is not a classifier; move it away first")
        calibrate_from_reviews(path, items, device=device, write=False)  # fails before anything is copied
        shutil.copytree(
            path, target, ignore=shutil.ignore_patterns("SHA256SUMS", "__init__.py", "__pycache__")
        )
        path = target
    summary = calibrate_from_reviews(path, items, device=device, write=write)
    return {"path": str(path), "written": write, **summary}


def reviewed_items(store: Store, law: str = "gdpr", *, include_system: bool = False) -> list[ReviewedItem]:
    """Every current paragraph with at least one human decision on its links to ``law``'s articles.

    An article a paragraph has both accepted and rejected links to (e.g. for two of its paragraphs) counts as
    accepted. Decisions by the system (rescore, law change) are left out unless ``include_system``.
    """
    from compliance.models.reviews import ReviewedItem
    from compliance.store.link_history import CurrentLink

    by_paragraph: dict[int, list[CurrentLink]] = {}
    for link in store.current_links(law=law, status=("accepted", "rejected")):
        if link.article is None or link.reviewer is None:
            continue
        if not include_system and link.reviewer.startswith("compliance ("):
            continue
        by_paragraph.setdefault(link.paragraph_id, []).append(link)
    items = []
    for pid, links in sorted(by_paragraph.items()):
        accepted = sorted({x.article for x in links if x.status == "accepted" and x.article is not None})
        rejected = sorted(
            {x.article for x in links if x.status == "rejected" and x.article is not None} - set(accepted)
        )
        items.append(
            ReviewedItem(f"paragraph:{pid}", links[0].paragraph_text, tuple(accepted), tuple(rejected))
        )
    return items
