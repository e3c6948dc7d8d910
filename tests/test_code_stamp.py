"""The code a kept figure, chart or body was worked out by is in its stamp (results/kept.py
code_stamp): a change to any of its sources changes the stamp, so nothing kept by older code is
shown in an older shape."""

from pathlib import Path

from app.ratings import kept as ratings_kept
from app.results import run_charts
from app.results import run_speed_charts
from app.results import stability
from app.results.kept import code_stamp

APP = Path(stability.__file__).resolve().parent.parent


def _copy(source, target):
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source.read_bytes())
    return target


def test_a_code_stamp_changes_when_a_file_it_names_changes(tmp_path):
    module = _copy(APP / "results" / "stability.py", tmp_path / "results" / "stability.py")
    before = code_stamp(module, ("stability.py",))
    module.write_bytes(module.read_bytes() + b"\n# changed\n")
    assert code_stamp(module, ("stability.py",)) != before


def test_a_code_stamp_over_a_glob_changes_when_a_file_it_matches_changes(tmp_path):
    module = _copy(APP / "results" / "run_charts.py", tmp_path / "results" / "run_charts.py")
    for path in sorted((APP / "charts").glob("*.py")):
        _copy(path, tmp_path / "charts" / path.name)
    names = ("run_charts.py", "../charts/*.py")
    before = code_stamp(module, names)
    palette = tmp_path / "charts" / "palette.py"
    palette.write_bytes(palette.read_bytes().replace(b"#", b"# ", 1))
    assert code_stamp(module, names) != before


def test_a_code_stamp_over_a_glob_changes_when_a_module_is_added_there(tmp_path):
    module = _copy(APP / "results" / "run_charts.py", tmp_path / "results" / "run_charts.py")
    _copy(APP / "charts" / "palette.py", tmp_path / "charts" / "palette.py")
    names = ("run_charts.py", "../charts/*.py")
    before = code_stamp(module, names)
    (tmp_path / "charts" / "new_kind.py").write_text("WIDTH = 1\n")
    assert code_stamp(module, names) != before


def test_a_code_stamp_changes_with_its_version(tmp_path):
    module = _copy(APP / "results" / "stability.py", tmp_path / "stability.py")
    assert code_stamp(module, ("stability.py",), 1) != code_stamp(module, ("stability.py",), 2)


def test_stability_is_stamped_by_its_own_source():
    assert stability._CODE == code_stamp(stability.__file__, ("stability.py",))


def test_a_run_chart_is_stamped_by_the_code_that_draws_it_and_the_chart_toolkit():
    names = ("charts.py", "run_charts.py", "../charts/*.py")
    assert run_charts._CODE == code_stamp(run_charts.__file__, names)


def test_a_speed_chart_is_stamped_by_the_code_that_draws_it_and_the_chart_toolkit():
    names = ("speed_charts.py", "run_speed_charts.py", "speed.py", "goodput.py", "../charts/*.py")
    assert run_speed_charts._CODE == code_stamp(run_speed_charts.__file__, names)


def test_a_report_chart_is_stamped_by_the_chart_toolkit():
    assert ratings_kept._TOOLKIT == code_stamp(ratings_kept.__file__, ("../charts/*.py",))
