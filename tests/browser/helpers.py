"""What the browser tests share: Debian's chromium and its flags, screenshots at two widths,
waiting for a page's requests to finish, and the app served on a free loopback port."""

import contextlib
import os
import threading

from werkzeug.serving import make_server

from app.config import REPO_ROOT
from app.db.connection import database

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SHOTS = REPO_ROOT / "screenshots"  # git-ignored
WIDTHS = (1280, 390)
# Pictures of the pages for a person to look at: LLMBENCH_SCREENSHOTS=1. Off by default: a
# full-page picture takes ~0.8 s, a third of the page-by-page test's time.
SCREENSHOTS = os.environ.get("LLMBENCH_SCREENSHOTS") == "1"


def settle(page):
    """Let the page's requests finish (its favicon, a poll) before leaving it: a connection
    the browser drops mid-response leaves werkzeug's file handle to the garbage collector,
    and its ResourceWarning would land in another test."""
    try:
        page.wait_for_load_state("networkidle", timeout=5_000)
    except Exception:  # a page that keeps polling: nothing is mid-response for long
        pass


def picture(target, name, **options):
    """A screenshot of a page or a locator as screenshots/<name>.png, when SCREENSHOTS."""
    if SCREENSHOTS:
        SHOTS.mkdir(exist_ok=True)
        target.screenshot(path=str(SHOTS / f"{name}.png"), **options)


def shot(page, name):
    """Full-page screenshots at 1280 px and 390 px wide (when SCREENSHOTS)."""
    settle(page)
    if not SCREENSHOTS:
        return
    size = page.viewport_size
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(150)  # let the layout reflow before the picture, not a wait for work
        picture(page, f"{name}-{width}", full_page=True)
    page.set_viewport_size(size)


@contextlib.contextmanager
def serving(app, name):
    """Serve `app` on 127.0.0.1:<free port> in a thread; yields its base URL."""
    httpd = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=httpd.serve_forever, name=name, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}"
    finally:
        httpd.shutdown()
        thread.join(timeout=10)
        httpd.server_close()
        if not database.is_closed():
            database.close()
