"""How often the tasks' checks and the LLM judge agree, on the real model of
../shared/llm/serve-local-llm (SmolLM2-135M as target and judge).

    .venv/bin/python bench/real_checks_vs_judge.py [--collection quick|full] [--db PATH]

Runs every built-in task of the collection that carries checks, answered and judged by the
served model, through the JSON API and the engine as in the app. Prints, per task, whether its
checks passed, the judge's own score and pass (>= 50), then the share of answers on which they
agree and Cohen's kappa between them. Not a test: a tiny model's figures are for reading.
"""

import argparse
import base64
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.db.connection import database
from app.db.models import Item
from app.db.models import Provider
from app.db.models import Run
from app.engine.foreground import run_foreground
from app.factory import create_app
from app.scoring.score import PASS_SCORE

RUN_ID = "checks-vs-judge"


def _app(db):
    return create_app(
        {
            "TESTING": True,
            "DB": db,
            "SCHEDULER_ENABLED": False,
            "LOAD_DEFAULTS": True,  # the llama.cpp provider and the built-in collections
            "WTF_CSRF_ENABLED": False,
            "SECRET_KEY": "real",
            "MASTER_KEY_BASE64": base64.b64encode(b"r" * 32).decode(),
        }
    )


def kappa(pairs):
    """Cohen's kappa of two raters' pass/fail over `pairs` [(a, b)]; None when undefined."""
    n = len(pairs)
    if not n:
        return None
    observed = sum(a == b for a, b in pairs) / n
    pa = sum(a for a, _ in pairs) / n
    pb = sum(b for _, b in pairs) / n
    expected = pa * pb + (1 - pa) * (1 - pb)
    return None if expected == 1 else (observed - expected) / (1 - expected)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="quick", choices=["quick", "full"])
    parser.add_argument("--db", default=None)
    args = parser.parse_args()
    db = args.db or str(Path(tempfile.mkdtemp(prefix="llmbench-checks-")) / "llmbench.db")
    app = _app(db)
    client = app.test_client()
    with database.connection_context():
        provider = Provider.get(Provider.base_url.contains("18080"))
    models = client.get(f"/api/providers/{provider.id}/models").get_json()
    model = models[0]["id"]
    collection = next(
        c for c in client.get("/api/collections").get_json() if c["name"] == args.collection
    )
    members = set(collection["taskIds"])
    tasks = client.get("/api/tasks").get_json()
    task_ids = [t["id"] for t in tasks if t["id"] in members and t.get("checks")]
    spec = {
        "runId": RUN_ID,
        "judgeProviderId": provider.id,
        "judgeModel": model,
        "judgeParams": {"temperature": 0, "max_tokens": 300},
        "targets": [
            {
                "providerId": provider.id,
                "model": model,
                "params": {"temperature": 0, "max_tokens": 160, "seed": 1},
            }
        ],
        "taskIds": task_ids,
    }
    response = client.post("/api/runs", json=spec)
    assert response.status_code == 201, response.get_json()
    print(f"run {RUN_ID}: {len(task_ids)} tasks with checks, model {model}, db {db}")
    state = run_foreground(RUN_ID, app.config, holder="bench")
    print(f"state: {state}")
    with database.connection_context():
        run = Run.get(Run.run_id == RUN_ID)
        items = list(Item.select().where(Item.run == run).order_by(Item.task_key))
    pairs, rows = [], []
    for item in items:
        if not item.check_results:
            continue
        checks_pass = all(r["passed"] for r in item.check_results)
        judge = (item.judge_scores or [None])[0]
        if judge is None:
            rows.append((item.task_key, checks_pass, None, None, item.error_stage or "-"))
            continue
        judge_pass = judge >= PASS_SCORE
        pairs.append((checks_pass, judge_pass))
        rows.append((item.task_key, checks_pass, judge, judge_pass, item.evaluation_score))
    print(f"{'task':<22} {'checks':<7} {'judge':>6} {'judge pass':<10} {'item score':>10}")
    for task, cp, js, jp, score in rows:
        judge_text = "-" if js is None else f"{js:6.1f}"
        jp_text = "-" if jp is None else ("pass" if jp else "fail")
        checks_text = "pass" if cp else "fail"
        print(f"{task:<22} {checks_text:<7} {judge_text:>6} {jp_text:<10} {score!s:>10}")
    agree = sum(a == b for a, b in pairs)
    k = kappa(pairs)
    print(
        f"judged with checks: {len(pairs)} of {len(rows)}; agree on pass/fail: {agree} "
        f"({100 * agree / max(1, len(pairs)):.0f} %); checks pass {sum(a for a, _ in pairs)}, "
        f"judge passes {sum(b for _, b in pairs)}; Cohen's kappa "
        + ("undefined" if k is None else f"{k:.2f}")
    )


if __name__ == "__main__":
    main()
