"""A real labelling session against ../shared/llm/serve-local-llm, in steps, on one database.

    .venv/bin/python bench/real_llm_labels.py run       # a run: one model twice (two params
                                                        # profiles), judge check first
    .venv/bin/python bench/real_llm_labels.py show      # the answers, for a person to judge
    .venv/bin/python bench/real_llm_labels.py label FILE.json   # that person's ratings + votes
    .venv/bin/python bench/real_llm_labels.py judge     # the judge votes on the same pairs
    .venv/bin/python bench/real_llm_labels.py report    # judge check, agreement, leaderboard

FILE.json: {"ratings": {"<item id>": [rating, ["tag", ...], "note"]},
            "votes": [["<task id>", "A" | "B" | "tie"]]}   (A = the first target)
Everything goes through the JSON API (the test client) and the engine, as in the app.
Database: --db (default /tmp/llmbench-real-labels/llmbench.db).
"""

import argparse
import base64
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.db.connection import database
from app.db.models import Provider
from app.db.models import Run
from app.db.models import RunTarget
from app.engine.foreground import run_foreground
from app.factory import create_app

RUN_ID = "real-labels"
TASKS = 8


def _app(db):
    Path(db).parent.mkdir(parents=True, exist_ok=True)
    return create_app(
        {
            "TESTING": True,
            "DB": db,
            "SCHEDULER_ENABLED": False,
            "LOAD_DEFAULTS": True,  # the llama.cpp provider and the built-in quick collection
            "WTF_CSRF_ENABLED": False,
            "SECRET_KEY": "real",
            "MASTER_KEY_BASE64": base64.b64encode(b"r" * 32).decode(),
        }
    )


def _provider_and_model(client):
    with database.connection_context():
        provider = Provider.get(Provider.base_url.contains("18080"))
    models = client.get(f"/api/providers/{provider.id}/models").get_json()
    return provider, models[0]["id"]


def _targets():
    with database.connection_context():
        run = Run.get(Run.run_id == RUN_ID)
        return list(RunTarget.select().where(RunTarget.run == run).order_by(RunTarget.position))


def cmd_run(app, client, _args):
    provider, model = _provider_and_model(client)
    quick = [c for c in client.get("/api/collections").get_json() if c["name"] == "quick"][0]
    spec = {
        "runId": RUN_ID,
        "judgeProviderId": provider.id,
        "judgeModel": model,
        "judgeParams": {"temperature": 0, "max_tokens": 200},
        "targets": [
            {
                "providerId": provider.id,
                "model": model,
                "params": {"temperature": 0, "max_tokens": 96, "seed": 1},
            },
            {
                "providerId": provider.id,
                "model": model,
                "params": {"temperature": 1.3, "max_tokens": 96, "seed": 7},
            },
        ],
        "collectionIds": [quick["id"]],
        "settings": {"questionLimit": TASKS},
        "judgeCheck": True,
    }
    response = client.post("/api/runs", json=spec)
    print(response.status_code, response.get_json().get("runId", response.get_json()))
    with database.connection_context():
        print("state:", run_foreground(RUN_ID, app.config, holder="real-labels"))
    print(json.dumps([t["label"] for t in client.get(f"/api/runs/{RUN_ID}").get_json()["targets"]]))


def cmd_show(_app, client, _args):
    items = client.get(f"/api/runs/{RUN_ID}/items?perPage=500").get_json()["items"]
    for item in sorted(items, key=lambda i: (i["taskId"], i["targetId"])):
        print(
            f"--- item {item['id']} · {item['taskId']} · target {item['targetId']} "
            f"({item['targetLabel']}) · judge {item['evaluationScore']}"
        )
        print("Q:", item["question"].strip()[:400])
        print("REF:", (item["references"]["excellent"] or "")[:200])
        print("A:", (item["answer"] or "").strip()[:500])


def cmd_label(_app, client, args):
    data = json.loads(Path(args.file).read_text())
    for item_id, (rating, tags, note) in data["ratings"].items():
        body = {"rating": rating, "tags": tags, "notes": note}
        response = client.put(f"/api/runs/{RUN_ID}/items/{item_id}/rating", json=body)
        assert response.status_code == 200, response.get_json()
    first, second = _targets()
    scope = {"runA": RUN_ID, "targetA": first.id, "targetB": second.id}
    wanted = {task: choice for task, choice in data["votes"]}
    items = client.get(f"/api/runs/{RUN_ID}/items?perPage=500").get_json()["items"]
    target_of = {i["id"]: i["targetId"] for i in items}
    voted = 0
    while (pair := client.get("/api/pairwise/next", query_string=scope)).status_code == 200:
        body = pair.get_json()
        choice = wanted.get(body["taskId"], "tie")
        left_is_a = target_of[body["left"]["itemId"]] == first.id
        winner = {
            "tie": "TIE",
            "A": "LEFT" if left_is_a else "RIGHT",
            "B": "RIGHT" if left_is_a else "LEFT",
        }[choice]
        response = client.post(
            "/api/pairwise/votes",
            json={
                "leftItemId": body["left"]["itemId"],
                "rightItemId": body["right"]["itemId"],
                "winner": winner,
            },
        )
        assert response.status_code == 201, response.get_json()
        voted += 1
    print(f"rated {len(data['ratings'])} items, voted {voted} pairs")


def cmd_judge(app, client, _args):
    provider, model = _provider_and_model(client)
    first, second = _targets()
    body = {
        "runA": RUN_ID,
        "targetA": first.id,
        "targetB": second.id,
        "judgeProviderConfigId": provider.id,
        "judgeModelName": model,
    }
    response = client.post("/api/pairwise/judge", json=body)
    print(response.status_code, response.get_json())
    with database.connection_context():
        print("state:", run_foreground(RUN_ID, app.config, holder="real-labels"))
    if response.status_code == 202:
        print(json.dumps(client.get(response.headers["Location"]).get_json(), indent=1))


def cmd_report(_app, client, _args):
    check = client.get(f"/api/runs/{RUN_ID}/judge-check").get_json()
    print(
        "judge check:",
        json.dumps(
            {k: check[k] for k in ("tasks", "ordered", "orderedRate", "meanByLevel", "nByLevel")}
        ),
    )
    print("disordered:", json.dumps(check["disordered"]))
    print("agreement with the person:", json.dumps(check["humanAgreement"]))
    for source in ("human", "judge", "all"):
        rows = client.get(f"/api/leaderboard?runs={RUN_ID}&source={source}").get_json()
        print(f"leaderboard ({source}):")
        for r in rows:
            rating = "–" if r["rating"] is None else f"{r['rating']:.0f}"
            ci = "–" if r["ciLow"] is None else f"{r['ciLow']:.0f}–{r['ciHigh']:.0f}"
            print(
                f"  {r['target']:44} rating {rating:>5}  95% {ci:>11}  "
                f"W/L/T {r['wins']}/{r['losses']}/{r['ties']}  winrate {r['winRate']}  "
                f"n {r['votes']}  rank {r['rank']}"
            )
    details = client.get(f"/api/leaderboard/details?runs={RUN_ID}").get_json()
    print("judge position consistency:", json.dumps(details["consistency"]))
    summary = client.get(f"/runs/{RUN_ID}/summary.json").get_json()
    print("report KPIs:", json.dumps(summary["ratings"]["targets"], indent=1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("run", "show", "label", "judge", "report"))
    parser.add_argument("file", nargs="?")
    parser.add_argument("--db", default="/tmp/llmbench-real-labels/llmbench.db")
    args = parser.parse_args()
    app = _app(args.db)
    client = app.test_client()
    {
        "run": cmd_run,
        "show": cmd_show,
        "label": cmd_label,
        "judge": cmd_judge,
        "report": cmd_report,
    }[args.step](app, client, args)


if __name__ == "__main__":
    main()
