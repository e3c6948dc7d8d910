"""The category chart's value labels read at phone width: a label sits inside the end of a bar
long enough to hold it (white on the bar) and just after the end of a short one (ink on the
page), never centred on a short bar's end where it smudges with the bar and the axis."""

import re

import pytest
from lxml import etree

from app.charts.key import CHAR_WIDTH
from app.results.charts import category_chart

SVG = "{http://www.w3.org/2000/svg}"
TABLE = {
    "by": "category",
    "models": [{"label": "smollm · temperature 0.2"}, {"label": "smollm · temperature 0.8"}],
    "rows": [
        {"key": "logic", "cells": [{"avg": 1.0}, {"avg": 2.0}]},
        {"key": "code", "cells": [{"avg": 95.0}, {"avg": 96.0}]},
    ],
}


def _labels(narrow):
    """{label text: (its x, its anchor, its classes, (its bar's start, its bar's end))}."""
    root = etree.fromstring(category_chart(TABLE, narrow).encode())
    bars = [
        (
            float(r.get("x")),
            float(r.get("x")) + float(r.get("width")),
            float(r.get("y")),
            float(r.get("y")) + float(r.get("height")),
        )
        for r in root.iter(f"{SVG}rect")
        if "tooltip-trigger" in (r.get("class") or "")
    ]
    out = {}
    for text in root.iter(f"{SVG}text"):
        if "value" not in (text.get("class") or "").split():
            continue
        y = float(text.get("y"))
        bar = next(b for b in bars if b[2] <= y <= b[3])
        out[text.text] = (float(text.get("x")), text.get("text-anchor"), text.get("class"), bar[:2])
    return out


@pytest.mark.parametrize("narrow", [True, False])
def test_a_short_bars_value_starts_after_the_bar_end(narrow):
    for value in ("1.0", "2.0"):
        x, anchor, _classes, (_start, end) = _labels(narrow)[value]
        assert anchor == "start" and x > end


@pytest.mark.parametrize("narrow", [True, False])
def test_a_long_bars_value_ends_inside_the_bar_in_white(narrow):
    svg = category_chart(TABLE, narrow)
    font = 20 if narrow else 12
    for value in ("95.0", "96.0"):
        x, anchor, classes, (start, end) = _labels(narrow)[value]
        assert anchor == "end" and x < end and x - len(value) * CHAR_WIDTH * font > start
        assert "inside" in classes.split()
    assert re.search(r"text\.value\.inside\{fill:#fff\}", svg)


def test_a_zeros_value_starts_at_the_axis():
    table = {**TABLE, "rows": [{"key": "math", "cells": [{"avg": 0.0}, {"avg": 50.0}]}]}
    root = etree.fromstring(category_chart(table, narrow=True).encode())
    zero = next(t for t in root.iter(f"{SVG}text") if t.text == "0.0")
    assert zero.get("text-anchor") == "start"
