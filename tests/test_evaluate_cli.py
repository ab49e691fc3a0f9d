"""`compliance evaluate --queries FILE`: the user's own labelled JSONL beside the built-in query sets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from compliance.cli import cli
from compliance.errors import ConfigurationError
from compliance.evaluation.queries import (
    controls_query_set,
    false_friends,
    labelled_query_set,
    list_controls_query_set,
    security_controls_query_set,
    word_sense_controls_query_set,
)

ROWS = [
    {"id": "a", "text": "Laptops are encrypted and backups are restored and tested.", "articles": [32]},
    {"id": "b", "text": "Data subjects may ask for a copy of their personal data.", "articles": [15]},
    {
        "id": 3,
        "text": "Breaches are notified to the supervisory authority within 72 hours.",
        "articles": ["33", 32],
    },
]


def _write(path: Path, rows: list[object]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    return path


@pytest.fixture()
def gdpr_mirror(shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from compliance.settings import reset_settings

    monkeypatch.setenv("COMPLIANCE_LAW_MIRROR", str(shared_data / "laws"))
    reset_settings()


def test_labelled_query_set_is_named_after_the_file(tmp_path: Path) -> None:
    qs = labelled_query_set(_write(tmp_path / "my-controls.jsonl", ROWS))
    assert qs.name == "my-controls" and len(qs) == 3
    assert qs.queries["3"].startswith("Breaches") and qs.gold == {"a": [32], "b": [15], "3": [33, 32]}
    assert labelled_query_set(tmp_path / "my-controls.jsonl", name="other").name == "other"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": "a", "text": "x", "articles": [32]}\nnot json\n', r"bad.jsonl:2: not valid JSON"),
        ('{"id": "a", "articles": [32]}\n', r"row 1: missing text"),
        (
            '{"id": "a", "text": "x", "articles": [32]}\n{"id": "a", "text": "y", "articles": [5]}\n',
            "duplicate id",
        ),
        ('{"id": "a", "text": "  ", "articles": [32]}\n', "non-empty string"),
        ('{"id": "a", "text": "x", "articles": []}\n', "non-empty list of article numbers"),
        ('{"id": "a", "text": "x", "articles": ["Art. 5"]}\n', "non-empty list of article numbers"),
        ('["a", "x", [5]]\n', "expected an object"),
        ("\n", "no labelled queries"),
    ],
)
def test_malformed_files_are_refused_with_the_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigurationError, match=message):
        labelled_query_set(path)


def test_the_shipped_control_set_is_package_data() -> None:
    qs = controls_query_set()
    assert qs.name == "controls" and len(qs) >= 120
    assert all(1 <= a <= 99 for gold in qs.gold.values() for a in gold)
    security = security_controls_query_set()
    assert security.name == "security-controls" and len(security) >= 30
    assert all(32 in gold for gold in security.gold.values())
    assert not set(security.queries.values()) & set(qs.queries.values())
    senses = word_sense_controls_query_set()
    assert senses.name == "word-sense-controls" and len(senses) >= 40
    friends = false_friends()
    assert set(friends) == set(senses.gold)
    assert all(friends[q] not in gold for q, gold in senses.gold.items())
    from compliance.evaluation import BUILT_IN_SETS
    from compliance.evaluation.queries import BUNDLED_SETS

    assert set(BUNDLED_SETS) <= set(BUILT_IN_SETS)  # the command line offers every bundled set
    lists = list_controls_query_set()
    assert lists.name == "list-controls" and len(lists) >= 40
    assert all("\n" in text and text.split("\n")[0].endswith(":") for text in lists.queries.values())


def test_evaluate_cli_on_a_users_own_file(tmp_path: Path, gdpr_mirror: None) -> None:
    mine = _write(tmp_path / "mine.jsonl", ROWS)
    args = [
        "evaluate",
        "--baselines-only",
        "--baseline",
        "prior",
        "--baseline",
        "bm25",
        "--queries",
        str(mine),
    ]
    result = CliRunner().invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["query_sets"] == {"mine": 3}  # --queries alone: only the user's set
    rankers = {row["ranker"] for row in report["rows"] if row["set"] == "mine"}
    assert rankers == {"prior(training)", "prior(law)", "bm25"}
    bm25 = next(row["metrics"] for row in report["rows"] if row["ranker"] == "bm25")
    assert 0.0 < bm25["mrr"] <= 1.0
    # beside a built-in set, and a second file
    other = _write(tmp_path / "other.jsonl", ROWS[:1])
    result = CliRunner().invoke(
        cli,
        [
            *args,
            "--queries",
            str(other),
            "--set",
            "controls",
            "--set",
            "list-controls",
            "--limit",
            "5",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["query_sets"] == {
        "controls": 5,
        "list-controls": 5,
        "mine": 3,
        "other": 1,
    }
    table = CliRunner().invoke(cli, args)
    assert table.exit_code == 0 and "mine" in table.output and "queries: {'mine': 3}" in table.output


def test_evaluate_cli_refuses_unknown_articles_and_clashing_names(tmp_path: Path, gdpr_mirror: None) -> None:
    bad = _write(tmp_path / "bad.jsonl", [{"id": "x", "text": "Something.", "articles": [120]}])
    result = CliRunner().invoke(
        cli, ["evaluate", "--baselines-only", "--baseline", "prior", "--queries", str(bad)]
    )
    assert result.exit_code == 1
    assert "bad.jsonl: query 'x' names article(s) [120]" in result.output and "C101" in result.output
    clash = _write(tmp_path / "controls.jsonl", ROWS)
    result = CliRunner().invoke(
        cli, ["evaluate", "--baselines-only", "--baseline", "prior", "--queries", str(clash)]
    )
    assert result.exit_code == 1 and "a query set named 'controls' is already evaluated" in result.output
