"""Bits of a check's reason: short quotes of text and numbers as a person writes them."""

SHOWN_CHARS = 60  # a reason quotes at most this much of a value or an answer


def show(text, limit=SHOWN_CHARS):
    """The text in backquotes, cut with … past `limit` characters."""
    text = str(text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"`{text}`"


def num(value):
    """A number without a needless fraction: 42, 41.5, 0.001, 1e+20."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:g}" if isinstance(value, float) else str(value)


def metric(value):
    """A 0-100 metric with one decimal: 31.0."""
    return f"{value:.1f}"
