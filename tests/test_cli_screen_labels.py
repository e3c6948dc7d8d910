"""The run screen names targets by their labels (two profiles of one model differ there) and
`p` pauses the run, as its keys line offers."""

from rich.console import Console

from app.cli.screen import KEYS_HINT
from app.cli.screen import RunScreen
from app.cli.screen_output import _pause
from app.db.connection import database
from app.db.models import Run
from app.runs.watch import snapshot
from tests.cli_helpers import judge_scores
from tests.cli_helpers import make_cli
from tests.cli_helpers import rows
from tests.cli_helpers import write_config
from tests.test_cli_screen import DATA

PROFILES = (
    "targets=[{provider: fake, model: m1, params: {temperature: 0}},"
    " {provider: fake, model: m1, params: {temperature: 1}}]"
)


def _live_screen(pause):
    screen = RunScreen(Console(), lambda item_id: DATA, keys=False, pause=pause)
    screen._live = type("Live", (), {"update": lambda self, *a, **k: None})()
    return screen


def test_the_keys_line_offers_p_to_pause():
    assert "p pause" in KEYS_HINT


def test_p_pauses_the_run_once_on_the_next_redraw():
    asked = []
    screen = _live_screen(lambda: asked.append(1) or "Pausing")
    screen.on_key("p")
    assert asked == []  # the key reader's thread only asks; the main thread pauses
    screen.refresh()
    screen.on_key("p")
    screen.refresh()
    assert asked == [1]
    screen.show = "log"
    assert "Pausing" in "\n".join(screen._events)


def test_two_profiles_of_one_model_have_two_names_on_the_screen(tmp_path, fake):
    cli = make_cli(tmp_path)
    fake.responder = judge_scores({})
    result = cli("run", "-c", write_config(tmp_path, fake, tasks=2), "--set", PROFILES)
    assert result.exit_code == 0, result.output
    (run,) = rows(Run)
    with database.connection_context():
        names = [t["label"] for t in snapshot(Run.get_by_id(run.id), None)["targets"]]
    assert len(set(names)) == 2 and all(n.startswith("fake/m1") for n in names)


def test_p_on_a_run_that_is_not_running_says_why(tmp_path, fake):
    cli = make_cli(tmp_path)
    fake.responder = judge_scores({})
    assert cli("run", "-c", write_config(tmp_path, fake, tasks=1), "--quiet").exit_code == 0
    (run,) = rows(Run)
    assert _pause(run.run_id)().startswith("Cannot pause: run ")


def test_the_plain_end_of_run_table_prints_long_labels_whole(tmp_path, fake):
    cli = make_cli(tmp_path)
    fake.responder = judge_scores({})
    long_model = "smollm2-135m-instruct-with-a-long-name"
    config = write_config(tmp_path, fake, tasks=1, targets=(long_model,))
    result = cli("run", "-c", config, "--set", "targets[0].params={max_tokens: 200}")
    assert result.exit_code == 0, result.output
    assert f"fake/{long_model} · max_tokens 200 " in result.stdout
