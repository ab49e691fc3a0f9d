"""experiments.alert_expectations: scoring an alert run against must/must-not expectations."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from compliance.errors import ConfigurationError
from experiments.alert_expectations import load_expectations, locate, score_alerts


def _paragraph(pid: int, source: str, text: str) -> Any:
    return SimpleNamespace(id=pid, source=source, text=text)


def _alert(pid: int, decision: str, link: float) -> Any:
    return SimpleNamespace(
        paragraph_id=pid, decision=decision, score=link, evidence={"scores": {"link": link}}
    )


PARAGRAPHS = [
    _paragraph(1, "/data/policies/marketing.docx", "We send  e-mail newsletters only\nwith consent."),
    _paragraph(2, "/data/policies/marketing.docx", "Cookies are set after the banner is accepted."),
    _paragraph(3, "/data/policies/office.docx", "Desks are cleared at the end of each day."),
    _paragraph(4, "/data/policies/office.docx", "Badges are worn at all times."),
]
SPEC = {
    "law": "eprivacy",
    "must_alert": [
        {
            "document": "marketing.docx",
            "phrase": "e-mail newsletters only with consent",
            "topic": "marketing",
        },
        {"document": "marketing.docx", "phrase": "Cookies are set", "topic": "cookies"},
    ],
    "must_not_alert": [
        {"document": "office.docx", "phrase": "Desks are cleared", "topic": "clean desk"},
        {"document": "office.docx", "phrase": "Badges", "topic": "badges"},
    ],
}


def test_score_alerts_counts_hits_false_alarms_and_ranking() -> None:
    alerts = [_alert(1, "alert", 0.9), _alert(3, "alert", 0.5), _alert(2, "review", 0.4)]
    score = score_alerts(alerts, PARAGRAPHS, SPEC)
    assert (score.must_alert, score.must_not_alert) == (2, 2)
    assert (score.alerted_true, score.alerted_false) == (1, 1)
    assert (score.flagged_true, score.flagged_false) == (2, 1)
    assert score.precision == 0.5 and score.recall == 0.5 and score.flagged_recall == 1.0
    # pairs (positive, negative): (1,3) win, (1,4) win, (2,3) loss, (2,4) win
    assert score.pairwise_ranking == pytest.approx(0.75)
    assert score.misses == ("cookies: Cookies are set",)
    assert score.false_alarms == ("clean desk: Desks are cleared",)
    assert score.to_dict()["alerts_total"] == 2 and score.to_dict()["review_total"] == 1


def test_locate_needs_exactly_one_paragraph() -> None:
    assert locate(PARAGRAPHS, "marketing.docx", "newsletters  only with") == 1  # whitespace collapsed
    with pytest.raises(ConfigurationError, match="0 paragraphs"):
        locate(PARAGRAPHS, "marketing.docx", "Badges")
    twice = [*PARAGRAPHS, _paragraph(5, "/x/office.docx", "Badges again.")]
    with pytest.raises(ConfigurationError, match="2 paragraphs"):
        locate(twice, "office.docx", "Badges")


def test_the_shipped_eprivacy_expectations_load_as_package_data(tmp_path: Any) -> None:
    spec = load_expectations()
    assert spec["law"] == "eprivacy" and len(spec["must_alert"]) >= 20 and spec["must_not_alert"]
    copy = tmp_path / "spec.json"
    copy.write_text('{"law": "x", "must_alert": [], "must_not_alert": []}', encoding="utf-8")
    assert load_expectations(copy)["law"] == "x"
    assert score_alerts([], [], copy).must_alert == 0
