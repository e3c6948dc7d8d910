"""SLO attainment and goodput (issue 29): how many answers per second a target gives that are
both fast enough and good enough, per load step, and the highest load that still meets the SLO.

A run's SLO is its `settings.slo` (runs/spec.py clean_slo): latency bounds in ms (`ttftP90Ms`,
`itlP90Ms`, `e2eP95Ms`) and the score a good answer needs (`minScore`), each optional.

- An answer is **good** when its own TTFT is within ttftP90Ms, the p90 of its own token gaps
  within itlP90Ms (an answer with no gaps, one chunk, has nothing to hold against it), its
  end-to-end time within e2eP95Ms, its score at least minScore and it did not auto-fail; each
  bound only where it is set. An answer without a figure a bound needs (no TTFT, no score yet)
  is not good: nothing shows it met it.
- **Goodput** = good answers / the answering window's seconds (speed.py's window: the first send
  to the last answer's end), so it is in answers per second, like requests/s.
- A **step meets the SLO** when its p90 TTFT, p90 ITL (its answers' gaps merged) and p95
  end-to-end time are within their bounds and its average score is at least minScore; a
  figure that cannot be measured fails it.
- **Load steps**: answers are grouped by `Item.step`; a step's load is
  `settings.load.steps[step]` (concurrency or requests/s, `settings.load.mode`). A run without
  steps is one step, its load the run's `concurrency` setting where it has one.

One query per run (the answers' timing columns, score and auto-fail as tuples); the whole
target's latency figures are run_speed's, so they match the speed table.
"""

import numpy as np

from ..db.connection import database
from ..latency import figures
from ..latency import percentile
from ..latency import unpack_lists
from ..runs.outcomes import IS_ANSWER_FAILED
from ..runs.outcomes import SCORE
from ..runs.outcomes import I
from .speed import run_speed
from .speed import window

# (SLO key, speed figure, percentile name, words): the latency bounds, in the order shown.
BOUNDS = (
    ("ttftP90Ms", "ttftMs", "p90", "p90 TTFT"),
    ("itlP90Ms", "itlMs", "p90", "p90 ITL"),
    ("e2eP95Ms", "e2eMs", "p95", "p95 e2e"),
)
LOAD_WORDS = {"concurrency": "concurrency {load:g}", "rate": "{load:g} requests/s"}
NO_STEP = "no step met the SLO"


def run_slo(run):
    """The run's SLO ({} when it has none)."""
    slo = (run.settings or {}).get("slo")
    return dict(slo) if isinstance(slo, dict) else {}


def slo_words(slo):
    """The SLO in words: "p90 TTFT ≤ 500 ms and score ≥ 70" ("" for an empty one)."""
    parts = [f"{words} ≤ {slo[key]:g} ms" for key, _, _, words in BOUNDS if key in slo]
    if "minScore" in slo:
        parts.append(f"score ≥ {slo['minScore']:g}")
    if len(parts) > 1:
        return ", ".join(parts[:-1]) + " and " + parts[-1]
    return "".join(parts)


def run_goodput(run, slo=None, speed=None):
    """{"slo", "words", "loadMode", "targets": [figures per target, in the run's order]} of
    `run` against `slo` (default: the run's own; None when it has none; {} counts every answer
    that did not auto-fail).
    `speed`: run_speed(run), when a caller has it.

    A target's figures: its answers, good answers, their share and goodput, the SLO's
    attainment (each bound against run_speed's percentile, the average score against
    minScore, and whether all hold), its steps with the same figures each, the highest load
    step that meets the SLO and a sentence saying so."""
    if slo is None:
        slo = run_slo(run)
        if not slo:
            return None
    slo = dict(slo)
    speed = run_speed(run) if speed is None else speed
    load = (run.settings or {}).get("load")
    load = load if isinstance(load, dict) else {}
    mode = load.get("mode") if load.get("steps") else None
    steps_load = load.get("steps") if isinstance(load.get("steps"), list) else []
    need_itl = "itlP90Ms" in slo
    by_target = {}
    for row in _read(run, need_itl):
        by_target.setdefault(row[0], []).append(_answer(slo, row, need_itl))
    out = []
    for target in speed["targets"]:
        tid = target["targetId"]
        answers = by_target.get(tid, [])
        whole = _group(answers)
        del whole["percentiles"]  # run_speed's stand for the whole target
        whole["attainment"] = _attainment(
            slo, {key: target[fig][name] for key, fig, name, _ in BOUNDS}, whole["avgScore"]
        )
        whole["met"] = all(a["met"] for a in whole["attainment"].values())
        steps = []
        for step in sorted({a["step"] for a in answers}):
            one = _group([a for a in answers if a["step"] == step])
            one["attainment"] = _attainment(slo, one.pop("percentiles"), one["avgScore"])
            one["met"] = all(a["met"] for a in one["attainment"].values())
            value = _step_load(run, steps_load, step)
            steps.append({"step": step, "load": value, "loadText": load_text(mode, value), **one})
        best = max(
            (s for s in steps if s["met"]),
            key=lambda s: (s["load"] is not None, s["load"] or 0, s["step"]),
            default=None,
        )
        out.append(
            {
                "targetId": tid,
                "label": target["label"],
                "slo": slo,
                **whole,
                "steps": steps,
                "highestLoad": None
                if best is None
                else {"step": best["step"], "load": best["load"]},
                "sentence": _sentence(target["label"], slo, mode, best),
            }
        )
    return {"slo": slo, "words": slo_words(slo), "loadMode": mode, "targets": out}


def _step_load(run, steps_load, step):
    """A step's load: settings.load.steps[step], or the run's concurrency for a run without
    steps; None when neither says."""
    if steps_load:
        value = steps_load[step] if 0 <= step < len(steps_load) else None
    else:
        value = (run.settings or {}).get("concurrency") if step == 0 else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def load_text(mode, load):
    """A step's load in words ("concurrency 4", "2 requests/s"); None when it is unknown."""
    if load is None:
        return None
    return LOAD_WORDS.get(mode or "concurrency", LOAD_WORDS["concurrency"]).format(load=load)


def _sentence(label, slo, mode, best):
    words = slo_words(slo) or "no SLO set"
    if best is None:
        return f"{label}: {NO_STEP} ({words})"
    load = load_text(mode, best["load"])
    where = "at this run's load" if load is None else f"at {load}"
    return f"serves {label} {where} with {words}" if slo else f"serves {label} {where} ({words})"


def _read(run, need_itl):
    """One query: (target, step, e2e ms, ttft ms, sent, tokens, itl blob or None, score,
    auto-failed) of every answer (not an answer failure, with an answer time)."""
    query = I.select(
        I.target,
        I.step,
        I.time_taken_ms,
        I.ttft_ms,
        I.sent_ts,
        I.tokens_generated,
        I.itl_hist if need_itl else I.id,
        SCORE,
        I.auto_fail,
    ).where((I.run == run) & I.time_taken_ms.is_null(False) & ~IS_ANSWER_FAILED)
    return database.execute(query).fetchall()


def is_good(slo, ttft, e2e, itl_p90, score, auto_failed):
    """Whether one answer meets the SLO (see the module docstring)."""
    if auto_failed:
        return False
    if "ttftP90Ms" in slo and (ttft is None or ttft > slo["ttftP90Ms"]):
        return False
    if "itlP90Ms" in slo and itl_p90 is not None and itl_p90 > slo["itlP90Ms"]:
        return False
    if "e2eP95Ms" in slo and (e2e is None or e2e > slo["e2eP95Ms"]):
        return False
    return "minScore" not in slo or (score is not None and score >= slo["minScore"])


def _answer(slo, row, need_itl):
    """One answer's row as what its group needs: its gaps decoded once (when the SLO bounds
    ITL) and whether it is good."""
    _, step, e2e, ttft, sent, tokens, blob, score, auto_failed = row
    gaps = unpack_lists(blob) if need_itl and blob else None
    own = figures(*gaps, names=("p90",)) if gaps else None
    itl_p90 = None if own is None else own["p90"]
    return {
        "step": step or 0,
        "e2e": e2e,
        "ttft": ttft,
        "sent": sent,
        "tokens": tokens,
        "gaps": gaps,
        "score": score,
        "good": is_good(slo, ttft, e2e, itl_p90, score, auto_failed),
    }


def _group(answers):
    """The goodput figures of some answers (a target, or one step of it), with their own
    latency percentiles (the caller pops them where run_speed's stand instead)."""
    good = sum(a["good"] for a in answers)
    scores = [a["score"] for a in answers if a["score"] is not None]
    merged = {}
    for a in answers:
        if a["gaps"]:
            for b, n in zip(*a["gaps"], strict=True):
                merged[b] = merged.get(b, 0) + n
    span = window(
        np.array([np.nan if a["sent"] is None else a["sent"] for a in answers], dtype=float),
        np.array([a["e2e"] for a in answers], dtype=float),
        np.array([np.nan if a["tokens"] is None else a["tokens"] for a in answers], dtype=float),
    )
    seconds = span["seconds"]
    ordered = sorted(merged.items())
    itl = figures([b for b, _ in ordered], [n for _, n in ordered], ("p90",)) if merged else None
    ttfts = sorted(a["ttft"] for a in answers if a["ttft"] is not None)
    return {
        "answers": len(answers),
        "good": good,
        "goodShare": good / len(answers) if answers else None,
        "goodput": good / seconds if seconds else None,
        "windowSeconds": seconds,
        "reason": span["reason"],
        "avgScore": sum(scores) / len(scores) if scores else None,
        "percentiles": {
            "ttftP90Ms": percentile(ttfts, 0.90),
            "itlP90Ms": None if itl is None else itl["p90"],
            "e2eP95Ms": percentile(sorted(a["e2e"] for a in answers), 0.95),
        },
    }


def _attainment(slo, values, avg_score):
    """{key: {value, limit, met}} of each bound the SLO sets, and of minScore (the average
    score); a figure that cannot be measured does not meet its bound."""
    out = {}
    for key, _, _, _ in BOUNDS:
        if key in slo:
            value = values.get(key)
            out[key] = {
                "value": value,
                "limit": slo[key],
                "met": value is not None and value <= slo[key],
            }
    if "minScore" in slo:
        out["minScore"] = {
            "value": avg_score,
            "limit": slo["minScore"],
            "met": avg_score is not None and avg_score >= slo["minScore"],
        }
    return out
