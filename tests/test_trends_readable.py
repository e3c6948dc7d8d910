"""Trends reads whole: each line by its target's one name, and one far-off run does not flatten
the speed lines (the axis is cut above the others and the outlier is marked)."""

import datetime as dt
import re

from app.charts.linechart import clip_top
from app.charts.linechart import line_chart
from app.schedules.digest import digest_finished
from tests.over_time import T0
from tests.over_time import finished_run

DAY = dt.timedelta(days=1)


def _series(values):
    return [
        {
            "name": "local/m1",
            "points": [{"t": 1000.0 + 86400 * n, "y": v} for n, v in enumerate(values)],
        }
    ]


def test_one_outlier_cuts_the_axis_above_the_others():
    assert clip_top([40, 42, 41, 39, 25_000]) == 3 * 42
    assert clip_top([40, 42, 41, 39, 45]) is None


def test_a_clipped_speed_chart_marks_the_outlier_and_says_how_far_it_went():
    svg = line_chart(
        _series([40, 42, 41, 39, 25_000]), title="Tokens per second", clip_outliers=True
    )
    assert "axis cut at" in svg and "1 point above" in svg and "25k" in svg
    assert "<path d=" in svg  # the triangle at the top edge
    # The normal points spread over the plot: their dots are not all squashed at the bottom.
    ys = [float(y) for y in re.findall(r'<circle cx="[\d.]+" cy="([\d.]+)"', svg)]
    assert max(ys) - min(ys) > 100


def test_a_chart_without_outliers_is_drawn_as_before():
    svg = line_chart(_series([40, 42, 41, 39, 45]), title="Tokens per second", clip_outliers=True)
    assert "axis cut" not in svg


def test_long_series_names_wrap_under_a_narrow_chart_whole():
    name = "llamacpp-smol/HuggingFaceTB/SmolLM2-135M-Instruct-GGUF-Q8_0 · temperature 0.8"
    series = [{"name": name, "points": [{"t": 1000.0, "y": 1.0}]}]
    svg = line_chart(series, title="Score", narrow=True)
    key = svg[svg.index('class="chart-key"') :]
    lines = re.findall(r"<text[^>]*>([^<]*)</text>", key)
    assert len(lines) > 1 and "".join("".join(lines).split()) == "".join(name.split())
    height = float(re.search(r'viewBox="0 0 [\d.]+ ([\d.]+)"', svg).group(1))
    last = max(float(y) for y in re.findall(r'<text x="[\d.]+" y="([\d.]+)"', key))
    assert last <= height


def test_trends_name_each_line_by_its_targets_label(app, client):
    finished_run("r1", {"local/m1": [60, 80]})
    finished_run("r2", {"local/m1": [70, 90]}, finished_at=T0 + DAY)
    digest_finished(T0 + 2 * DAY)
    body = client.get("/api/trends").get_json()
    assert [s["label"] for s in body["series"]] == ["local/m1"]
    page = client.get("/trends").get_data(as_text=True)
    assert "local/m1" in page
