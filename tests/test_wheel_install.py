"""Installed like a tool: the wheel built from this source, installed into a fresh venv in a
folder outside the checkout, serves every page of its navigation (templates and static files
inside the wheel), runs a benchmark beside its own server, and writes nothing outside its home.

Building the wheel uses pip's build isolation: setuptools comes from pip's cache or the
network (PyPI). The venv sees this environment's dependencies through a .pth line (installed
with --no-deps), so no dependency is downloaded; the llmbench it runs is the wheel's."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.config import REPO_ROOT
from tests.cli_helpers import SECRET
from tests.cli_helpers import judge_scores
from tests.cli_helpers import write_config
from tests.serve_helpers import Served

SOURCES = ["app", "templates", "static", "pyproject.toml", "setup.py", "README.md"]


def _files(root):
    """Every file under `root` (relative), for "nothing else was written here"."""
    return sorted(str(p.relative_to(root)) for p in Path(root).rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the venv's llmbench script, the venv's python) with the wheel of this source."""
    tmp = tmp_path_factory.mktemp("wheel")
    listed = subprocess.run(
        ["git", "ls-files", "-z", *SOURCES], cwd=REPO_ROOT, capture_output=True, check=False
    )
    if listed.returncode != 0:
        pytest.skip("not a git checkout: the wheel is built from the tracked files")
    source = tmp / "src"
    for name in filter(None, listed.stdout.decode().split("\0")):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / name, source / name)
    dist = tmp / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-w", str(dist), "-q"],
        capture_output=True,
        text=True,
        check=False,
    )
    said = built.stdout + built.stderr
    offline = re.search(r"(?i)could not find a version|connection|network", said)
    if built.returncode != 0 and offline:
        pytest.skip(f"no setuptools to build the wheel with (no network?): {said[-300:]}")
    assert built.returncode == 0, said[-2000:]
    (wheel,) = dist.glob("llmbench-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python*/site-packages"))
    # This environment's dependencies, not its llmbench: a plain path line does not run the
    # editable install's own .pth (its finder), so `app` is the wheel's.
    deps = next(p for p in map(Path, sys.path) if p.name == "site-packages" and p.is_dir())
    (site / "deps.pth").write_text(f"{deps}\n")
    python = venv / "bin" / "python"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            # The checkout's editable llmbench is visible through deps.pth: without this, a pip
            # that finds it "already satisfied" installs nothing (pip 26.3 did).
            "--force-reinstall",
            "-q",
            str(wheel),
        ],
        check=True,
    )
    return venv / "bin" / "llmbench", python


@pytest.fixture
def places(tmp_path):
    """A user's home, a working folder and the llmbench home, all empty."""
    folders = {name: tmp_path / name for name in ("user", "work", "home")}
    for folder in folders.values():
        folder.mkdir()
    return folders


def _env(places, **extra):
    """The environment of the installed tool: no LLMBENCH_*, XDG_* or PYTHONPATH (which would
    import this checkout), the user's home in `places`."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LLMBENCH_", "XDG_")) and k != "PYTHONPATH"
    }
    return {**env, "HOME": str(places["user"]), **extra}


def test_the_installed_app_is_the_wheels_not_the_checkouts(installed, places):
    _script, python = installed
    where = subprocess.run(
        [str(python), "-c", "import app; print(app.__file__)"],
        cwd=places["work"],
        env=_env(places),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert str(python.parent.parent) in where and str(REPO_ROOT) not in where


def test_info_names_the_per_user_home_of_an_installed_tool(installed, places):
    script, _python = installed
    result = subprocess.run(
        [str(script), "info", "--json"],
        cwd=places["work"],
        env=_env(places),
        capture_output=True,
        text=True,
        check=True,
    )
    facts = json.loads(result.stdout)
    home = places["user"] / ".local" / "share" / "llmbench"
    assert facts["home"] == str(home) and facts["database"] == str(home / "llmbench.db")
    assert facts["version"] == "0.1.0" and facts["keyFile"] == str(home / "master.key")
    assert _files(places["user"]) == [] and _files(places["work"]) == []


def test_serve_from_the_wheel_serves_its_pages_and_a_run_beside_it(
    installed, places, tmp_path, fake
):
    script, _python = installed
    fake.responder = judge_scores({})
    config = write_config(tmp_path, fake)  # in tmp_path itself, beside the three folders
    env = {
        "HOME": str(places["user"]),
        "LLMBENCH_BACKOFF_BASE_SECONDS": "0.01",
        "FAKE_KEY": SECRET,
    }
    with Served(places["home"], extra_env=env, command=[str(script)], cwd=places["work"]) as served:
        page = served.get("/")
        assert page.status_code == 200
        links = sorted(set(re.findall(r'href="(/[a-z][^"#?]*)"', page.text)))
        assert any(link.startswith("/static/") for link in links), links
        for link in links[:25]:
            assert served.get(link).status_code == 200, link
        run = subprocess.run(
            [str(script), "run", "-c", str(config), "--quiet"],
            cwd=places["work"],
            env=_env(places, LLMBENCH_HOME=str(places["home"]), **env),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert run.returncode == 0, run.stderr
    assert _files(places["user"]) == []  # no ~/.gunicorn/, nothing else
    assert _files(places["work"]) == []
    kept = _files(places["home"])
    assert "llmbench.db" in kept and "master.key" in kept
