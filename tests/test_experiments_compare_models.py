"""experiments.compare_models: classifiers side by side on the realistic sets, beside the frequency prior."""

from __future__ import annotations

from compliance.evaluation.queries import controls_query_set, security_controls_query_set
from experiments.compare_models import FALSE_FRIEND, METRICS, compare, false_friend_share, render
from tests.fixtures.classifier.tiny import shared_tiny_classifier


def test_a_model_compared_with_itself_changes_nothing_and_stands_beside_the_prior() -> None:
    model = shared_tiny_classifier()
    sets = {"controls": controls_query_set(), "security-controls": security_controls_query_set()}
    counts = {32: 10.0, 6: 5.0, 28: 1.0}
    result = compare([model, model], sets, counts)
    for name, block in result["sets"].items():
        assert block["texts"] == len(sets[name].gold)
        figures = block["figures"]
        assert set(figures) == {str(model), "prior"}
        assert set(figures[str(model)]) == set(METRICS)
        assert all(0.0 <= v <= 1.0 for v in figures[str(model)].values())
        assert block["changes"] == []  # the same scores: no text changes its first article
    # the prior ranks Art. 32 first for every text: its hit@1 is the share of texts with Art. 32 among their gold
    security = sets["security-controls"]
    share = sum(32 in g for g in security.gold.values()) / len(security.gold)
    assert result["sets"]["security-controls"]["figures"]["prior"]["acc@1"] == round(share, 4)
    table = render(result, changes=True)
    assert f"| controls ({len(sets['controls'].gold)}) | mrr |" in table
    assert "changed" not in table


def test_render_lists_the_control_texts_whose_first_article_changed() -> None:
    result = {
        "models": ["old", "new"],
        "sets": {
            "controls": {
                "texts": 1,
                "figures": {m: dict.fromkeys(METRICS, 0.5) for m in ("old", "new", "prior")},
                "changes": [
                    {"id": "ctl-044", "text": "A data processing agreement …", "gold": [28], "first": [6, 28]}
                ],
            }
        },
    }
    table = render(result, changes=True)
    assert "| controls (1) | mrr | 0.500 | 0.500 | 0.500 |" in table
    assert "controls: 1 text(s) whose first article changed" in table
    assert "ctl-044  gold [28]  first 6 → 28" in table
    assert "ctl-044" not in render(result)


def test_the_word_sense_set_reports_how_often_the_false_friend_comes_first() -> None:
    from compliance.evaluation.queries import false_friends, word_sense_controls_query_set

    assert false_friend_share(["a", "b", "c", "d"], [15, 32, 30, 40], {"a": 15, "b": 15, "c": 30}) == round(
        2 / 3, 4
    )
    assert false_friend_share(["a"], [15], {}) == 0.0
    model = shared_tiny_classifier()
    senses = word_sense_controls_query_set()
    result = compare([model], {"word-sense-controls": senses})
    block = result["sets"]["word-sense-controls"]
    share = block["figures"][str(model)][FALSE_FRIEND]
    assert 0.0 <= share <= 1.0 and set(false_friends()) == set(senses.gold)
    assert f"| word-sense-controls ({len(senses.gold)}) | {FALSE_FRIEND} |" in render(result)
