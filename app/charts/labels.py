"""Axis and legend labels cut to fit: pygal does not truncate y-axis labels."""


def short(label, limit):
    """A label cut in the middle to `limit` characters."""
    if len(label) <= limit:
        return label
    head = (limit - 1) // 2
    return label[:head] + "…" + label[-(limit - 1 - head) :]


def model_label(name, limit):
    """A model's name that fits `limit` characters and still says which model it is: the part
    before the last "/" (an organisation, "HuggingFaceTB/") goes first, then the middle."""
    if len(name) > limit and "/" in name:
        name = name.rsplit("/", 1)[1]
    return short(name, limit)


def chart_labels(rows, limit):
    """Axis labels for rows with a provider-qualified "label" ("provider/model"): the model's
    name alone, the provider kept only where two rows would otherwise read the same."""
    names = [row.get("target_label") or row["label"].split("/", 1)[-1] for row in rows]
    out = []
    for row, name in zip(rows, names, strict=True):
        if names.count(name) > 1:
            name = row["label"]
        out.append(model_label(name, limit))
    return out


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
