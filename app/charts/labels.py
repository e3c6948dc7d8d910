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
