"""Two runs compared, as Markdown: the same compare_runs result the page and `llmbench diff`
show, so a pull request comment never says other than the page."""

from .markdown import cell


def _num(value, signed=False):
    if value is None:
        return "–"
    return f"{value:+.1f}" if signed else f"{value:.1f}"


def _table(names, rows):
    out = ["| " + " | ".join(names) + " |", "| " + " | ".join("---" for _ in names) + " |"]
    out += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return out


def _changes(rows):
    return _table(
        ["Task", "Target", "A", "B", "Δ"],
        [
            [c["taskKey"], c["label"], _num(c["scoreA"]), _num(c["scoreB"]), _num(c["delta"], 1)]
            for c in rows
        ],
    )


def compare_markdown(result):
    """Markdown of one compare_runs() result: per target the scores and the verdict, the rules,
    then the regressions, improvements and changes below the threshold (the same lists)."""
    a, b = result["a"]["runId"], result["b"]["runId"]
    out = [f"# Compare {a} → {b}", ""]
    out += _table(
        ["Target", "Score A", "Score B", "Paired Δ", "Verdict", "Speed"],
        [
            [
                m["label"],
                _num(m["a"]["avgScore"]),
                _num(m["b"]["avgScore"]),
                _num(m["pairedScore"]["meanDiff"], True),
                f"{m['verdict']} ({m['verdictWhy']})",
                m["speed"]["verdict"] or m["speed"]["why"],
            ]
            for m in result["models"]
        ],
    )
    out += ["", result["method"], "", result["listRule"], "", result["speedRule"], ""]
    for warning in result["warnings"]:
        out.append(f"- Compare with care: {warning}")
    for title, key in (
        ("Regressions", "regressions"),
        ("Improvements", "improvements"),
        ("Changes below the threshold", "belowThreshold"),
    ):
        count = result["belowThresholdCount" if key == "belowThreshold" else key + "Count"]
        out += ["", f"## {title} ({count})", ""]
        out += _changes(result[key]) if result[key] else ["None."]
    return "\n".join(out) + "\n"
