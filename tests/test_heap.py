"""Memory a big piece of work freed goes back to the system between pieces (app/heap.py): on
glibc by malloc_trim, elsewhere nothing is done."""

import pytest

from app import heap

MIB = 2**20


def rss_mib():
    with open("/proc/self/status") as status:
        line = next(x for x in status if x.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


@pytest.mark.skipif(heap._find_trim() is None, reason="glibc's malloc_trim only")
def test_memory_freed_in_small_blocks_goes_back_to_the_system():
    # Freed small blocks below one still held stay with glibc, not the system, until trimmed.
    blocks = [bytearray(4000) for _ in range(64 * MIB // 4000)]
    held = bytearray(4000)
    del blocks
    freed = rss_mib()
    assert heap.give_back() is True
    assert rss_mib() < freed - 32
    assert len(held) == 4000


def test_without_glibc_nothing_is_given_back(monkeypatch):
    monkeypatch.setattr(heap.sys, "platform", "darwin")
    monkeypatch.setattr(heap, "_trim", [])
    assert heap.give_back() is False
