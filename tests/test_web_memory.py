"""Memory a page freed goes back to the system (web/memory.py): a trim once the server's RSS grew
by TRIM_STEP_MIB since the last one, not after every response."""

from app.web.memory import TRIM_STEP_MIB
from app.web.memory import Trimmer
from app.web.memory import rss_mib
from app.web.memory import should_trim


class CountingLibc:
    """Stands in for glibc: counts the trims asked for."""

    def __init__(self):
        self.trims = 0

    def malloc_trim(self, pad):
        self.trims += 1
        return 1


class Readings:
    """RSS readings in MiB, one per call, the last repeated."""

    def __init__(self, *values):
        self.values = list(values)

    def __call__(self):
        return self.values.pop(0) if len(self.values) > 1 else self.values[0]


def test_the_first_response_trims_and_sets_the_mark():
    assert should_trim(100.0, None)


def test_growth_under_the_step_does_not_trim():
    assert not should_trim(100.0 + TRIM_STEP_MIB - 1, 100.0)


def test_growth_of_the_step_trims():
    assert should_trim(100.0 + TRIM_STEP_MIB, 100.0)


def test_without_an_rss_reading_nothing_is_trimmed():
    assert not should_trim(None, None)


def test_responses_trim_only_when_the_rss_grew_a_step_since_the_last_trim():
    libc = CountingLibc()
    # Each trim check reads the RSS, and a trim reads it again after (the new mark).
    trimmer = Trimmer(libc, step=16, rss=Readings(120, 100, 110, 130, 105, 112))
    for _ in range(4):
        trimmer.after_response()
    # 120 -> trim (mark 100); 110: +10, none; 130: +30 -> trim (mark 105); 112: +7, none.
    assert libc.trims == 2
    assert trimmer.trimmed_at == 105


def test_without_glibc_a_response_does_nothing():
    trimmer = Trimmer(None, rss=Readings(500))
    trimmer.after_response()
    assert trimmer.trimmed_at is None


def test_the_rss_is_read_from_the_process():
    assert rss_mib() > 1


def test_every_response_of_the_app_checks_for_a_trim(client, app):
    trimmer = app.extensions["memory_trimmer"]
    trimmer.trimmed_at = None
    client.get("/runs/").close()
    assert trimmer.trimmed_at is not None
