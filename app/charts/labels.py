"""Axis labels that fit. A target is never cut (two profiles of one model differ only at the
end): it is named whole, or by a letter with its whole name in the key under the chart
(axis_names). Other labels (a category) may be cut in the middle (short)."""


def short(label, limit):
    """A label cut in the middle to `limit` characters."""
    if len(label) <= limit:
        return label
    head = (limit - 1) // 2
    return label[:head] + "…" + label[-(limit - 1 - head) :]


# How many characters an axis label may take: a wide chart's y axis, a phone's.
AXIS_WIDE = 34
AXIS_NARROW = 18


def letters(index):
    """A, B, … Z, AA, AB, …: a stable short key for the `index`-th name."""
    out = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        out = chr(65 + rest) + out
    return out


def axis_names(names, narrow):
    """(axis labels, key entries, note) for one chart naming `names` (targets' whole names).

    Never a cut name: the names themselves where all fit; else each is a stable letter (A, B, C
    in the names' order) and the key under the chart names each in full (two profiles of one
    model differ only at the end, which a cut would drop). Key entries are {"label", "mark"}
    for charts.key.add_key; the note is None (kept for a caption under the key)."""
    limit = AXIS_NARROW if narrow else AXIS_WIDE
    names = [str(n) for n in names]
    if all(len(n) <= limit for n in names):
        return names, [], None
    keys = [letters(i) for i in range(len(names))]
    return keys, [{"label": n, "mark": k} for k, n in zip(keys, names, strict=True)], None


def series_key(names, colors):
    """Key entries for series drawn in `colors`: each name whole beside its colour (a pygal
    legend would cut it to the width)."""
    return [{"label": str(n), "color": colors[i % len(colors)]} for i, n in enumerate(names)]
