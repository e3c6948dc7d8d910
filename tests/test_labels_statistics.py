"""Honest statistics for labels: the judge check tells ordered, tied and inverted tasks apart and
says when the judge cannot tell the references apart; it warns about a judge that is a target
or very small; people's agreement (Krippendorff's alpha, Fleiss' kappa) matches the references."""

import krippendorff
import numpy as np
import pytest

from app.db.models import JudgeCall
from app.db.models import JudgeJob
from app.ratings.agreement import fleiss_kappa
from app.ratings.agreement import krippendorff_alpha
from app.ratings.between_people import people_agreement
from app.ratings.judge_check import judge_check
from app.ratings.judge_check import judge_warnings
from app.ratings.judge_check import parameters
from app.ratings.judge_check import reference_report
from app.ratings.store import save_rating
from app.ratings.votes import record_vote
from tests.factories import add_item
from tests.factories import make_run
from tests.factories import shown_pair


@pytest.fixture
def run3(app):
    """Run r3: targets m1 and m2, ten answered tasks each."""
    run, targets = make_run("r3", targets=[("local", "m1"), ("local", "m2")])
    items = {}
    for target in targets:
        for n in range(10):
            items[(target.model, n)] = add_item(run, target, f"t{n}", score=50.0)
    return run, targets, items


def _reference_check(run, items, scores):
    job = JudgeJob.create(run=run, kind="reference", judge_provider_name="p", judge_model="j")
    for task, levels in scores.items():
        for level, score in zip(("excellent", "good", "pass"), levels, strict=True):
            JudgeCall.create(
                job=job, run=run, item=items[("m1", int(task[1:]))], level=level,
                status="COMPLETED", score=score,
            )  # fmt: skip
    return job


# ---- the judge check ----------------------------------------------------------------------------


def test_a_judge_giving_every_reference_one_score_is_not_called_ordered(run3):
    run, _targets, items = run3
    job = _reference_check(run, items, {f"t{n}": (80, 80, 80) for n in range(10)})
    report = reference_report(job)
    assert (report["ordered"], report["tied"], report["inverted"]) == (0, 10, 0)
    assert report["orderedRate"] == 0 and report["cannotTell"] is True


def test_the_judge_check_reports_ordered_tied_and_inverted_tasks_apart(client, run3):
    run, _targets, items = run3
    scores = {f"t{n}": (70, 70, 90 if n < 4 else 70) for n in range(8)}
    scores |= {"t8": (90, 60, 30), "t9": (95, 50, 10)}
    _reference_check(run, items, scores)
    check = judge_check("r3")
    assert (check["ordered"], check["tied"], check["inverted"]) == (2, 4, 4)
    page = client.get("/runs/r3/judge-check").get_data(as_text=True)
    assert "2 ordered · 4 tied · 4 inverted" in page


def test_the_judge_check_page_says_it_cannot_tell_them_apart_when_ties_dominate(client, run3):
    run, _targets, items = run3
    scores = {f"t{n}": (80, 80, 80) for n in range(8)} | {"t8": (90, 60, 30), "t9": (9, 6, 3)}
    _reference_check(run, items, scores)
    page = client.get("/runs/r3/judge-check").get_data(as_text=True)
    assert "The judge cannot tell these apart" in page
    assert "100 %" not in page and "80 %" not in page


@pytest.mark.parametrize(
    ("model", "size"),
    [
        ("qwen2.5:0.5b", 5e8),
        ("smollm2:135m", 1.35e8),
        ("SmolLM2-360M-Instruct", 3.6e8),
        ("llama3.2:1b", 1e9),
        ("llama3.1:8b", 8e9),
        ("gpt-4o-mini", None),
    ],
)
def test_a_models_size_is_read_from_its_name(model, size):
    assert parameters(model) == size


def test_a_judge_that_is_also_a_target_is_warned_about(app):
    run, _targets = make_run("self", targets=[("local", "judge-1"), ("local", "m2")])
    (warning,) = judge_warnings(run)
    assert "is also a target" in warning and "judge-1" in warning


def test_a_very_small_judge_is_warned_about(app):
    run, _targets = make_run("tiny", judge_model="smollm2:135m")
    (warning,) = judge_warnings(run)
    assert "very small" in warning


def test_a_large_judge_apart_from_the_targets_has_no_warning(app):
    run, _targets = make_run("fine", judge_model="qwen2.5:32b")
    assert judge_warnings(run) == []


# ---- agreement between people -------------------------------------------------------------------

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the 4 observers x 12 units
# example (None: not rated). The PyPI package is the reference for the ordinal value.
OBSERVERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def test_krippendorffs_ordinal_alpha_matches_the_reference_package():
    data = np.array([[np.nan if v is None else v for v in row] for row in OBSERVERS], float)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    result = krippendorff_alpha([list(unit) for unit in zip(*OBSERVERS, strict=True)])
    assert result["alpha"] == pytest.approx(expected)
    assert result["n"] == 11  # the last unit has one value: not pairable
    assert result["ciLow"] <= result["alpha"] <= result["ciHigh"]


def test_alpha_is_one_when_people_agree_and_undefined_without_two_raters():
    assert krippendorff_alpha([[4, 4], [2, 2], [5, 5]])["alpha"] == pytest.approx(1.0)
    assert krippendorff_alpha([[4], [2]]) == {
        "alpha": None,
        "ciLow": None,
        "ciHigh": None,
        "n": 0,
        "values": 0,
    }


def test_fleiss_kappa_matches_the_worked_example():
    # Fleiss (1971) as worked on Wikipedia: 10 subjects, 14 raters, 5 categories: kappa 0.210.
    rows = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]  # fmt: skip
    units = [[c for c, n in enumerate(row) for _ in range(n)] for row in rows]
    result = fleiss_kappa(units, range(5))
    assert result["kappa"] == pytest.approx(0.20993, abs=1e-5)
    assert result["n"] == 10 and result["ciLow"] < result["kappa"] < result["ciHigh"]


def test_people_agreement_reads_two_peoples_ratings_and_votes(run3):
    run, _targets, items = run3
    for n in range(10):
        stars = 1 + n % 5
        save_rating(items[("m1", n)], stars, [], "", rater="human:ann")
        save_rating(items[("m1", n)], stars, [], "", rater="human:bob")
    for voter in ("human:ann", "human:bob"):
        for n in range(4):
            token = shown_pair(items[("m1", n)].id, items[("m2", n)].id, voter)
            record_vote({"pairToken": token, "winner": ("LEFT", "RIGHT")[n % 2]}, voter)
    agreement = people_agreement([run])
    assert agreement["ratings"]["alpha"] == pytest.approx(1.0)
    assert agreement["ratings"]["n"] == 10
    assert agreement["votes"]["kappa"] == pytest.approx(1.0) and agreement["votes"]["n"] == 4


def test_the_judges_agreement_reads_one_rater_or_everyone_pooled(client, run3):
    _run, _targets, items = run3  # every item scored 50 by the judge: Likert 3
    for n in range(4):
        save_rating(items[("m1", n)], 3, [], "", rater="human:ann")
        save_rating(items[("m1", n)], 1, [], "", rater="human:bob")
    ann = client.get("/api/runs/r3/judge-check?rater=human:ann").get_json()
    pooled = client.get("/api/runs/r3/judge-check").get_json()
    assert ann["humanAgreement"]["n"] == 4 and pooled["humanAgreement"]["n"] == 8
    assert pooled["peopleAgreement"]["ratings"]["n"] == 4
    bad = client.get("/api/runs/r3/judge-check?rater=judge:p/j")
    assert bad.status_code == 400 and bad.get_json()["errors"][0]["field"] == "rater"


def test_the_judge_check_section_switches_between_everyone_and_one_rater(client, run3):
    _run, _targets, items = run3
    save_rating(items[("m1", 0)], 3, [], "", rater="human:ann")
    save_rating(items[("m1", 1)], 3, [], "", rater="human:bob")
    everyone = client.get("/runs/r3/judge-check").get_data(as_text=True)
    assert "On <strong>2</strong> items" in everyone and "human:bob" in everyone
    ann = client.get("/runs/r3/judge-check?rater=human:ann").get_data(as_text=True)
    assert "On <strong>1</strong> items" in ann and "ann's ratings" in ann
    assert client.get("/runs/r3/judge-check?rater=judge:x").status_code == 400
