"""A process that works a run caps glibc's malloc arenas before its threads start (arenas.py):
per-thread arenas each kept their own freed memory and a big run's peak RSS grew with it."""

import platform
import sys

import pytest

from app.cli import arenas

glibc = pytest.mark.skipif(
    not sys.platform.startswith("linux") or "glibc" not in " ".join(platform.libc_ver()),
    reason="malloc arenas are glibc's",
)


@glibc
def test_the_malloc_arenas_are_capped_on_glibc(monkeypatch):
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert arenas.cap_arenas() is True


def test_a_malloc_arena_max_in_the_environment_is_left_to_rule(monkeypatch):
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert arenas.cap_arenas() is False
