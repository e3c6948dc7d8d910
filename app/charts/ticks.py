"""Axis values: a few round ticks, and each one written short."""

import math


def nice_ticks(top, count):
    """About `count` round axis values from 0 up to at least `top` (steps of 1, 2, 2.5 or 5)."""
    if not top or top <= 0 or not math.isfinite(top):
        return [0, 1]
    raw = top / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [round(i * step, 6) for i in range(math.ceil(top / step - 1e-9) + 1)]


def short_number(value):
    """An axis value kept short: 850, 1.2k, 35k, 0.5."""
    if value is None:
        return ""
    if abs(value) >= 1000:
        return f"{value / 1000:.3g}k"
    return f"{value:.3g}"


def value_axis(top, narrow):
    """Range and labels of a pygal value axis from 0 to `top`: few enough to read at phone width."""
    ticks = nice_ticks(top, 4 if narrow else 8)
    return {"range": (0, ticks[-1]), "y_labels": ticks, "value_formatter": short_number}


def log_axis(smallest, top):
    """Range and labels of a logarithmic pygal value axis over whole powers of ten around
    `smallest`..`top` (both > 0); bars start at the axis's left end, not at pygal's smallest
    value."""
    low = 10 ** math.floor(math.log10(smallest))
    high = 10 ** math.ceil(math.log10(top))
    ticks = [10**e for e in range(round(math.log10(low)), round(math.log10(high)) + 1)]
    return {
        "logarithmic": True,
        "range": (low, high),
        "zero": low,
        "y_labels": ticks,
        "value_formatter": short_number,
    }
