"""Every page and state, checked as a person would at 1280×800 and 390×844: the page never
scrolls sideways, no table is wider than its box unless the box scrolls (and at 1280 px none is
cut), no console errors, every image and chart loads. Screenshots go to
screenshots/every-<page>-<width>.png (git-ignored). axe-core (vendored, MPL-2.0,
tests/browser/axe.min.js) finds no serious or critical violation on the main pages.

The app runs without its orchestrator: the states (running, paused, finished with failures, an
item in flight) are written to the database and stay still for the screenshots."""

import datetime as dt
from pathlib import Path

import pytest

from app.clock import utcnow
from app.db.connection import database
from app.db.models import CONTROL_PAUSED
from app.db.models import FAILED
from app.db.models import NEW
from app.db.models import PENDING
from app.db.models import Collection
from app.db.models import Provider
from app.db.models import Template
from app.db.models import Vote
from app.schedules.digest import digest_finished
from tests.browser.helpers import picture
from tests.browser.helpers import serving
from tests.conftest import make_app
from tests.engine_helpers import make_provider
from tests.factories import add_item
from tests.factories import bulk_items
from tests.factories import make_run
from tests.over_time import T0
from tests.over_time import finished_run

pytestmark = [pytest.mark.browser]

SIZES = ((1280, 800), (390, 844))
AXE = Path(__file__).with_name("axe.min.js")
LONG_MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct-Q8_0-GGUF"

# Everything that breaks "fits the screen", with where it is, for the failure message.
LAYOUT = """() => {
  const out = [];
  const root = document.documentElement;
  if (root.scrollWidth > window.innerWidth) {
    const wide = [...document.querySelectorAll('body *')]
      .filter(el => el.getBoundingClientRect().right > window.innerWidth + 1)
      .filter(el => !el.parentElement.closest('.table-wrap, .scroll-x'))
      .slice(0, 6).map(el => el.tagName + '.' + String(el.className) + '#' + el.id);
    out.push(`page ${root.scrollWidth}px wide in ${window.innerWidth}px: ${wide.join(', ')}`);
  }
  for (const table of document.querySelectorAll('table')) {
    if (!table.offsetParent) continue;
    let box = table.parentElement;
    const width = table.getBoundingClientRect().width;
    if (width <= box.clientWidth + 1) continue;
    let scrolls = false;
    for (let el = box; el && el !== document.body; el = el.parentElement) {
      const x = getComputedStyle(el).overflowX;
      if (x === 'auto' || x === 'scroll') { scrolls = true; break; }
    }
    if (!scrolls) {
      out.push(`table #${table.id}.${table.className} ${Math.round(width)}px`
        + ` in ${box.clientWidth}px`);
    }
  }
  if (window.innerWidth >= 1200) {  // at 1280 px wide tables fit: nothing hides to the right
    for (const wrap of document.querySelectorAll('.table-wrap')) {
      if (wrap.offsetParent && wrap.scrollWidth > wrap.clientWidth + 1) {
        const t = wrap.querySelector('table');
        out.push(`table #${t && t.id}.${t && t.className} cut:`
          + ` ${wrap.scrollWidth}px in ${wrap.clientWidth}px`);
      }
    }
  }
  // No cut legend or label: every text of an inline chart ends inside its picture.
  for (const svg of document.querySelectorAll('svg')) {
    if (!svg.getClientRects().length) continue;
    const box = svg.getBoundingClientRect();
    for (const text of svg.querySelectorAll('text')) {
      const r = text.getBoundingClientRect();
      if (r.width && (r.right > box.right + 2 || r.left < box.left - 2)) {
        out.push(`chart text cut: "${text.textContent.slice(0, 40)}" ends at`
          + ` ${Math.round(r.right)} of ${Math.round(box.right)}`);
        break;
      }
    }
  }
  return out;
}"""
IMAGES = """() => [...document.querySelectorAll('img')].map(img => img.currentSrc || img.src)"""
# Images the browser drew (lazy ones are brought into view first) that did not decode.
BROKEN = """async () => {
  const imgs = [...document.querySelectorAll('img')].filter(img => img.offsetParent);
  for (const img of imgs) { img.loading = 'eager'; }
  await Promise.all(imgs.map(img => img.decode().catch(() => null)));
  return imgs.filter(img => !img.complete || img.naturalWidth === 0)
    .map(img => img.src.slice(0, 80));
}"""


def _seed_running(now):
    """A run benchmarking now: answers in, one item in flight for 95 s, the rest new."""
    run, (a, b) = make_run(
        "live-running",
        status=PENDING,
        phase="BENCHMARKING",
        targets=(("fake-local", "alpha-7b"), ("fake-local", LONG_MODEL)),
        started_at=now - dt.timedelta(minutes=4),
        finished_at=None,
        judge_provider_name="fake-local",
        judge_model="judge-9b",
    )
    for n in range(6):
        add_item(run, a, f"q{n}", score=None, status="WAITING_FOR_JUDGE", answered_at=now)
    add_item(
        run,
        b,
        "q0",
        status=NEW,
        attempts=1,
        last_attempt_at=now - dt.timedelta(seconds=95),
        first_attempt_at=now - dt.timedelta(seconds=95),
        claimed_until=now + dt.timedelta(hours=1),
    )
    for n in range(1, 6):
        add_item(run, b, f"q{n}", status=NEW)


def _seed_paused():
    run, (t,) = make_run(
        "live-paused",
        status=PENDING,
        control=CONTROL_PAUSED,
        control_reason="paused by you",
        phase="BENCHMARKING",
        targets=(("fake-local", "alpha-7b"),),
    )
    for n in range(3):
        add_item(run, t, f"ok{n}", score=70.0)
    for n in range(5):
        add_item(run, t, f"new{n}", status=NEW)


def _seed_failures():
    run, (t,) = make_run("finished-failures", targets=(("fake-local", "alpha-7b"),))
    for n in range(9):
        add_item(run, t, f"ok{n}", score=60.0 + n)
    for n in range(3):
        add_item(
            run,
            t,
            f"bad{n}",
            status=FAILED,
            error_stage="answer",
            attempts=3,
            error_msg="Server answered 500 Internal Server Error: boom (gave up after 3 attempts)",
        )


def _seed_outlier():
    """Three models, one a fake server at 25 000 tok/s and one with a 120 s answer; long names
    and long texts (the exports must keep them whole)."""
    targets = (
        ("fake-local", "llama3.1:8b-instruct-q4_K_M"),
        ("smollm-real", LONG_MODEL),
        ("fake-local", "fake-fast"),
    )
    # Both runs have an SLO, so the compare page's speed table has its widest form (goodput).
    slo = {"slo": {"ttftP90Ms": 500}}
    run, made = make_run("outlier", targets=targets, settings=slo)
    long_q = "Explain, step by step and with an example, " + "why the sky is blue " * 30 + "?"
    for target in made:
        fast = target.model == "fake-fast"
        bulk_items(
            run,
            target,
            24,
            question=long_q,
            answer="A long answer " * 80,
            evaluation_reason="The answer is right but it rambles on " * 10,
            tokens_per_second=25_000.0 if fast else 30.0,
        )
    slow = made[1].items.first()
    slow.time_taken_ms = 120_000.0
    slow.save()
    run, made = make_run("outlier-prev", targets=targets, settings=slo)
    for target in made:
        bulk_items(run, target, 24, score_of=lambda n: float((n * 7) % 101))


def _seed_over_time():
    collection = Collection.create(name="nightly-bank")
    for day in range(6):
        finished_run(
            f"nightly-{day:02d}",
            {
                "fake-local/alpha-7b": [60 + day + (t % 7) for t in range(12)],
                "fake-local/beta-3b": [50 - day + (t % 5) for t in range(12)],
            },
            finished_at=T0 + dt.timedelta(days=day),
            collection=collection,
            category_of=lambda task: ("math", "logic", "facts")[task % 3],
        )
        digest_finished(T0 + dt.timedelta(days=day))
    Template.create(
        name="nightly",
        description="every night at 02:00",
        spec={
            "judgeProviderId": 1,
            "judgeModel": "judge-9b",
            "targets": [{"providerId": 1, "model": "alpha-7b"}],
            "collectionIds": [collection.id],
        },
        cron="0 2 * * *",
        schedule_enabled=True,
        next_fire_at=T0,
    )


def _seed_votes():
    run, (a, b) = make_run("ab", targets=(("fake-local", "alpha-7b"), ("fake-local", "beta-3b")))
    for n in range(8):
        left = add_item(run, a, f"q{n}", score=50.0 + n, answer=f"Alpha's answer {n}")
        right = add_item(run, b, f"q{n}", score=55.0 - n, answer=f"Beta's answer {n}")
        Vote.create(
            left_item=left,
            right_item=right,
            item_low=min(left.id, right.id),
            item_high=max(left.id, right.id),
            left_target=a,
            right_target=b,
            task_key=f"q{n}",
            winner=("LEFT", "RIGHT", "TIE")[n % 3],
            winner_target=(a.id, b.id, None)[n % 3],
            source="human",
            voter="me",
            created_at=T0,
        )
    return a.id, b.id


def _seed_profiles():
    """Two profiles of one long-named model (same provider and model, other params): every page
    and report.html must tell them apart, their names whole."""
    profiles = ({"temperature": 0.2}, {"temperature": 0.8, "top_p": 0.9})
    run, made = make_run(
        "profiles", targets=[("smollm-real", LONG_MODEL, params) for params in profiles]
    )
    for n, target in enumerate(made):
        bulk_items(run, target, 16, score_of=lambda k, n=n: float(40 + 10 * n + k % 9))


def _seed_small_drop():
    """Two runs where one task drops 2 points: no significant change, nothing under
    "Regressions", the drop listed below the threshold."""
    for run_id in ("drop-a", "drop-b"):
        run, (target,) = make_run(run_id, targets=(("fake-local", "alpha-7b"),))
        for n in range(12):
            score = 34.0 if (run_id == "drop-b" and n == 7) else 36.0
            add_item(run, target, f"coding_{n:03d}", score=score)


def _seed_trend_outlier():
    """One nightly run at 25 000 tok/s (a fake server): the speed lines must not go flat."""
    finished_run(
        "nightly-06",
        {
            "fake-local/alpha-7b": [66 + (t % 7) for t in range(12)],
            "fake-local/beta-3b": [44 + (t % 5) for t in range(12)],
        },
        finished_at=T0 + dt.timedelta(days=6),
        collection=Collection.get(Collection.name == "nightly-bank"),
        category_of=lambda task: ("math", "logic", "facts")[task % 3],
        tps=25_000.0,
    )
    digest_finished(T0 + dt.timedelta(days=6))


@pytest.fixture(scope="module")
def server(tmp_path_factory, fake_server):
    """The app (defaults loaded: the Ollama provider nobody runs) on 127.0.0.1, no engine."""
    fake_server.reset()
    fake_server.models = ["alpha-7b", "beta-3b", "judge-9b"]
    app = make_app(tmp_path_factory.mktemp("every-page"), LOAD_DEFAULTS=True)
    with database.connection_context():
        # The built-in Ollama provider points at a port where nothing listens.
        Provider.update(base_url="http://127.0.0.1:9").execute()
        # Named after the built-in ones, so the Ollama group is the one opened at first.
        provider = make_provider(fake_server, name="my-fake")
        ids = {"pid": provider.id, "ollama": Provider.get(Provider.type == "OLLAMA").id}
    database.close()
    with serving(app, "every-page") as base:
        yield {"base": base, **ids}
    fake_server.reset()


@pytest.fixture(scope="module")
def busy(server):
    """Runs in every state, history over days, votes and a schedule."""
    with database.connection_context():
        _seed_running(utcnow())
        _seed_paused()
        _seed_failures()
        _seed_outlier()
        _seed_over_time()
        _seed_profiles()
        _seed_small_drop()
        _seed_trend_outlier()
        a, b = _seed_votes()
        item = _first_item("outlier")
    database.close()
    return {"a": a, "b": b, "item": item}


def _first_item(run_id):
    from app.db.models import Item
    from app.db.models import Run

    return Item.select(Item.id).join(Run).where(Run.run_id == run_id).first().id


def look(browser, base, name, path, act=None, axe=False):
    """Open the page at both sizes; return what is wrong (and save the screenshots)."""
    problems = []
    for width, height in SIZES:
        problems += _look_at(browser, base, name, path, act, axe, width, height)
    return problems


def _look_at(browser, base, name, path, act, axe, width, height):
    # axe is injected as a script: at 1280 px on its pages the CSP is bypassed for it
    # (the 390 px visit still reports any CSP refusal as a console error).
    context = browser.new_context(
        viewport={"width": width, "height": height}, bypass_csp=axe and width == 1280
    )
    page = context.new_page()
    page.set_default_timeout(20_000)
    errors, problems = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on(
        "response",
        lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 500 else None,
    )
    at = f"{name} at {width}px"
    try:
        if path.endswith("report.html"):  # a download: its text opened as a page
            response = page.request.get(base + path)
            page.set_content(response.text())
        else:
            response = page.goto(base + path)
        if response.status != 200:
            problems.append(f"{path} answered {response.status}")
        page.wait_for_load_state("networkidle")
        if act:
            act(page)
            page.wait_for_load_state("networkidle")
        problems += [f"{at}: {p}" for p in page.evaluate(LAYOUT)]
        for src in page.evaluate(IMAGES):
            if src.startswith("data:image/"):
                continue
            reply = page.request.get(src)
            kind = reply.headers.get("content-type", "")
            if reply.status != 200 or not kind.startswith("image/"):
                problems.append(f"{at}: image {src} answered {reply.status} {kind}")
        problems += [f"{at}: broken image {src}" for src in page.evaluate(BROKEN)]
        if axe and width == 1280:
            problems += [f"{at}: {v}" for v in axe_violations(page)]
        # "every-" keeps these apart from the other browser tests' screenshots of the same pages.
        picture(page, f"every-{name}-{width}", full_page=True, timeout=90_000)
    finally:
        context.close()
    return problems + [f"{at}: console: {e}" for e in errors]


def axe_violations(page):
    """axe-core's serious and critical violations, as 'rule: target' lines."""
    if not AXE.exists():
        pytest.skip(f"{AXE} is missing")
    page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        """async () => (await axe.run(document, {resultTypes: ['violations']})).violations
        .filter(v => v.impact === 'serious' || v.impact === 'critical')
        .flatMap(v => v.nodes.slice(0, 3).map(n => `${v.id}: ${n.target.join(' ')}`))"""
    )
    return found


def test_the_first_screen_before_any_run(browser, server):
    problems = look(browser, server["base"], "first-dashboard", "/", axe=True)
    assert not problems, "\n".join(problems)


def test_an_ollama_that_is_not_running_is_said_calmly_on_the_first_screen(browser, server):
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        page.goto(server["base"] + "/")
        group = page.locator(
            "details.provider-group", has=page.locator(f"#group-status-{server['ollama']}")
        )
        expect(page.locator(f"#group-status-{server['ollama']}")).to_have_text(
            "not reachable, check that Ollama is running"
        )
        expect(group).not_to_have_attribute("open", "")
        assert page.locator(".field-note--error").count() == 0
        group.locator("summary").first.click()
        note = group.locator("[data-unreachable]")
        expect(note).to_contain_text("check that Ollama is running")
        expect(note.locator("button", has_text="Retry")).to_be_visible()
        assert "No runs yet. Start one with the New run form." in page.locator("main").inner_text()
    finally:
        context.close()


def _expand_first_row(page):
    page.locator("#results-table tbody tr[id^=item-] details summary").first.click()
    page.locator("#results-table td[id^=detail-]").first.wait_for()


def _test_inference(page):
    """Send one test prompt to the fake server; its answer is shown on the page."""
    page.eval_on_selector("details.provider-test", "d => { d.open = true; }")
    form = page.locator("form.provider-test__form").first
    form.locator("input[name=model]").fill("alpha-7b")
    form.locator("button[type=submit]").click()
    page.locator("[id^=provider-test-]").filter(has_text="alpha-7b").first.wait_for()


def _open_raw_events(page):
    page.locator("details.raw-events summary").click()
    page.locator("#raw-events").first.wait_for()


def _open_below_threshold(page):
    page.locator("details#cmp-below summary").click()


PAGES = [
    ("dashboard", "/", None, True),
    ("history", "/runs/", None, True),
    ("live-running", "/runs/live-running", None, True),
    ("live-paused", "/runs/live-paused", None, False),
    ("live-finished-failures", "/runs/finished-failures", None, False),
    ("results", "/runs/outlier/results", None, True),
    ("results-expanded", "/runs/outlier/results", _expand_first_row, False),
    ("item", "/runs/outlier/items/{item}", None, False),
    ("compare", "/compare?a=outlier-prev&b=outlier", None, True),
    ("evaluate", "/evaluate?run=outlier", None, True),
    ("ab", "/ab?runA=ab&targetA={a}&targetB={b}", None, True),
    ("ab-pick", "/ab?runA=ab", None, False),
    ("leaderboard", "/leaderboard?runs=ab", None, True),
    ("trends", "/trends", None, True),
    ("schedules", "/templates/", None, True),
    ("report", "/runs/outlier/report", None, False),
    ("report-html", "/runs/outlier/report.html", None, False),
    ("providers", "/settings/providers/", None, True),
    ("provider-new", "/settings/providers/new", None, False),
    ("provider-show", "/settings/providers/{pid}", None, False),
    ("provider-test-result", "/settings/providers/{pid}", _test_inference, False),
    ("tasks", "/settings/tasks/", None, True),
    ("collections", "/settings/collections/", None, False),
    ("import", "/settings/import/", None, False),
    ("prices", "/settings/prices", None, False),
    ("settings", "/settings/", None, False),
    ("labels", "/labels", None, False),
    ("report-html-profiles", "/runs/profiles/report.html", None, False),
    ("results-profiles", "/runs/profiles/results", None, False),
    ("report-profiles", "/runs/profiles/report", None, False),
    ("compare-small-drop", "/compare?a=drop-a&b=drop-b", _open_below_threshold, False),
    ("run-raw-events", "/runs/finished-failures", _open_raw_events, False),
    ("task-edit", "/settings/tasks/1/edit", None, False),
    ("template-new", "/templates/new", None, False),
    ("template-edit", "/templates/1/edit", None, False),
    ("accounts", "/accounts", None, True),
]


@pytest.mark.parametrize(("name", "path", "act", "axe"), PAGES, ids=[p[0] for p in PAGES])
def test_every_page_fits_loads_and_reads(browser, server, busy, name, path, act, axe):
    path = path.format(**server, **busy)
    problems = look(browser, server["base"], name, path, act, axe)
    assert not problems, "\n".join(problems)
