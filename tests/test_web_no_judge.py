"""The new-run form's "No judge" choice: ticked, the run is scored by the tasks' checks alone
and the judge inputs are ignored; a picked task without checks is said beside the choice, with
how many lack them, and nothing starts."""

import pytest
from bs4 import BeautifulSoup

from app.catalog.collections import add_tasks_to_collection
from app.catalog.collections import create_collection
from app.catalog.providers import create_provider
from app.catalog.tasks import create_task
from app.db.models import Run

SAYS_ANSWER = [{"type": "icontains", "value": "answer"}]


@pytest.fixture
def setup(app, fake):
    """A provider on the fake server and a collection of two tasks (`checks` on each)."""
    fake.models = ["m1"]
    provider = create_provider({"name": "fake", "type": "OPENAI", "base_url": fake.url})

    def collection(name, checks=(SAYS_ANSWER, SAYS_ANSWER)):
        tasks = [
            create_task(
                {
                    "task_id": f"{name}{n}",
                    "category": "math",
                    "excellent": "x",
                    "question": f"Q{n}?",
                    "checks": c or None,
                }
            )
            for n, c in enumerate(checks)
        ]
        made = create_collection(name)
        add_tasks_to_collection(made.id, [t.id for t in tasks])
        return made.id

    return provider.id, collection


def _form(pid, cid, **extra):
    return {"noJudge": "1", "target": [f"{pid}:m1"], "collectionIds": cid, "name": "nj", **extra}


def test_no_judge_starts_a_run_scored_by_checks_only(client, setup):
    pid, collection = setup
    response = client.post("/runs", data=_form(pid, collection("all")))
    assert response.status_code == 302, response.get_data(as_text=True)[:2000]
    run = Run.get()
    assert run.judge_model == "" and run.judge_provider is None


def test_no_judge_ignores_the_judge_inputs(client, setup):
    pid, collection = setup
    form = _form(pid, collection("all"), judgeProviderId=pid, judgeModel="m1")
    assert client.post("/runs", data=form).status_code == 302
    assert Run.get().judge_model == ""


def test_no_judge_with_tasks_without_checks_says_how_many_beside_the_choice(client, setup):
    pid, collection = setup
    response = client.post("/runs", data=_form(pid, collection("some", (SAYS_ANSWER, None))))
    assert response.status_code == 400
    page = BeautifulSoup(response.get_data(as_text=True), "html.parser")
    error = page.find(id="noJudge-error").get_text()
    assert "1 task has none" in error and "some1" in error
    assert page.find(id="noJudge").has_attr("checked")
    assert Run.select().count() == 0


def test_the_form_offers_no_judge_unticked(client, setup):
    page = BeautifulSoup(client.get("/").get_data(as_text=True), "html.parser")
    box = page.find(id="noJudge")
    assert box["type"] == "checkbox" and not box.has_attr("checked")
    assert "score with the tasks' checks only" in box.parent.get_text()
