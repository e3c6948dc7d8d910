"""compare_runs gives, byte for byte, what it gave before it read the pairs into numpy arrays
(tests/compare_before.py, the old computation frozen): on random runs with every outcome, missing
values, changed context hashes, repeats, targets in one run only and any list limit, on SQLite and
PostgreSQL. bench/bench_compare_first_view.py --check does the same on a 100 000-item pair."""

import json
import random

import pytest

from app.db.models import CANT_BE_FINISHED
from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import NEW
from app.db.models import WAITING_FOR_JUDGE
from app.db.models import Item
from app.db.models import RunTarget
from app.results.compare import compare_runs
from tests import compare_before
from tests.factories import make_run

# m1 on two providers: a target matches only the same provider and label in the other run.
TARGETS = [("local", "m1"), ("remote", "m1"), ("local", "m2"), ("remote", "m3"), ("local", "m4")]
# Task keys whose order differs between byte order and a language collation (case, accents).
KEYS = ["a", "B", "b", "é", "e", "Z", "zz", "10", "9", "t-1", "t_1", "Ωmega", "ä"]


def _as_json(result):
    return json.dumps(result, default=str)


def _outcome(rng):
    """An item's status, stage, score and time as a run can leave them."""
    unsettled = [FAILED, FAILED, CANT_BE_FINISHED, NEW, WAITING_FOR_JUDGE]
    status = rng.choice([COMPLETED] * 20 + unsettled)
    stage = None
    if status in (FAILED, CANT_BE_FINISHED):
        stage = rng.choice(["judge", "answer", None, "warmup"])
    scores = [None, 0.0, 50.0, 100.0, rng.uniform(0, 100)]
    score = rng.choice(scores + [rng.randint(0, 10) * 1.0] * 5)
    time_taken = rng.choice([None, 1000.0] + [rng.uniform(10, 5000)] * 5)
    return {"status": status, "error_stage": stage, "evaluation_score": score, "time": time_taken}


def _targets(rng):
    """Some of TARGETS in any order, each label once (a run's labels are its targets' keys)."""
    chosen = {}
    for provider, model in rng.sample(TARGETS, rng.randint(1, len(TARGETS))):
        chosen.setdefault(model, (provider, model))
    return list(chosen.values())


def _random_pair(rng, tasks, repeats=False, shared_positions=False, targets=None):
    if targets is None:
        # Mostly the same targets in both runs (in another order), now and then one apart.
        targets_a = _targets(rng)
        targets_b = [t for t in targets_a if rng.random() < 0.8] + _targets(rng)
        targets_b = list({model: (p, model) for p, model in reversed(targets_b)}.values())
        targets = (targets_a, targets_b)
    targets_a, targets_b = targets
    run_a, made_a = make_run("rand-a", targets=targets_a)
    run_b, made_b = make_run("rand-b", targets=targets_b)
    keys = [f"{rng.choice(KEYS)}{n}" for n in range(tasks)]
    hashes = [None, "", "h1", "h2"]
    # A drift shared by a target's tasks, so some verdicts come out better or worse.
    drift = {t: rng.choice([-30, -8, 0, 8, 30]) for t in TARGETS}
    rows = []
    for run, made, spec in ((run_a, made_a, targets_a), (run_b, made_b, targets_b)):
        for target, key in zip(made, spec, strict=True):
            for task in [k for k in keys if rng.random() < 0.9]:
                for _repeat in range(rng.choice([1, 1, 2]) if repeats else 1):
                    out = _outcome(rng)
                    score = out["evaluation_score"]
                    if score is not None and run is run_b and rng.random() < 0.9:
                        score = min(100.0, max(0.0, score + drift[key]))
                    rows.append(
                        {
                            "run": run.id,
                            "target": target.id,
                            "task_key": task,
                            "category": rng.choice(["math", "code", ""]),
                            "question": "q",
                            "status": out["status"],
                            "error_stage": out["error_stage"],
                            "evaluation_score": score,
                            "time_taken_ms": out["time"],
                            "context_hash": rng.choice(hashes),
                        }
                    )
    rng.shuffle(rows)  # ids in no particular order of task or target
    Item.insert_many(rows).execute()
    if shared_positions:
        RunTarget.update(position=0).where(RunTarget.run == run_a.id).execute()
    return run_a, run_b


@pytest.mark.parametrize("seed", range(16))
def test_a_random_compare_is_byte_identical_to_the_computation_before(app, seed):
    rng = random.Random(seed)
    run_a, run_b = _random_pair(rng, tasks=rng.choice([5, 60, 200]))
    limit = rng.choice([None, 0, 1, 3, 50])

    new = compare_runs(run_a, run_b, limit=limit)

    assert _as_json(new) == _as_json(compare_before.compare_runs(run_a, run_b, limit=limit))


@pytest.mark.parametrize("seed", range(4))
def test_repeats_of_a_task_compare_as_before_in_item_order(app, seed):
    rng = random.Random(100 + seed)
    run_a, run_b = _random_pair(rng, tasks=60, repeats=True)

    new = compare_runs(run_a, run_b, limit=5)

    assert _as_json(new) == _as_json(compare_before.compare_runs(run_a, run_b, limit=5))


def test_targets_sharing_a_position_list_judge_failures_in_the_database_order(app):
    rng = random.Random(7)
    both = [("local", "m1"), ("local", "m2"), ("remote", "m3")]
    run_a, run_b = _random_pair(rng, tasks=80, shared_positions=True, targets=(both, both))

    new = compare_runs(run_a, run_b, limit=4)

    assert new["judgeFailuresCount"] > 4
    assert _as_json(new) == _as_json(compare_before.compare_runs(run_a, run_b, limit=4))


def test_a_few_distinct_score_changes_take_the_histogram_bootstrap_as_before(app):
    # 200 paired tasks whose score differences take 3 values: the histogram path of the
    # bootstrap (values per distinct value above its ratio), from a numpy array here.
    run_a, (a,) = make_run("hist-a")
    run_b, (b,) = make_run("hist-b")
    rows = []
    for n in range(200):
        rows.append({"run": run_a.id, "target": a.id, "task_key": f"t{n}", "question": "q"})
        rows[-1].update(status=COMPLETED, evaluation_score=50.0, time_taken_ms=float(n))
        rows.append({"run": run_b.id, "target": b.id, "task_key": f"t{n}", "question": "q"})
        rows[-1].update(status=COMPLETED, evaluation_score=[40.0, 50.0, 70.0][n % 3])
        rows[-1].update(time_taken_ms=float(n % 7))
    Item.insert_many(rows).execute()

    new = compare_runs(run_a, run_b)

    assert new["models"][0]["pairedScore"]["n"] == 200
    assert _as_json(new) == _as_json(compare_before.compare_runs(run_a, run_b))
