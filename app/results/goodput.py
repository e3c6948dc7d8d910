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

One query per run (the answers' timing columns, score and auto-fail as tuples), worked out over
numpy columns and kept in a small cache until an item of the run changes (an index seek says
so, as for run_speed); the whole target's latency figures are run_speed's, so they match the
speed table.
"""

import numpy as np

from ..db.connection import database
from ..latency import figures
from ..latency import percentile
from ..latency import unpack_lists
from ..runs.outcomes import IS_ANSWER_FAILED
from ..runs.outcomes import SCORE
from ..runs.outcomes import I
from ..runs.spec import run_slo
from .kept_speed import stamp as speed_stamp
from .recent import Recent
from .speed import run_speed
from .speed import window

# (SLO key, speed figure, percentile name, words): the latency bounds, in the order shown.
BOUNDS = (
    ("ttftP90Ms", "ttftMs", "p90", "p90 TTFT"),
    ("itlP90Ms", "itlMs", "p90", "p90 ITL"),
    ("e2eP95Ms", "e2eMs", "p95", "p95 e2e"),
)
LOAD_WORDS = {"concurrency": "concurrency {load}", "rate": "{load} requests/s"}
NO_STEP = "no step met the SLO"


def number(value):
    """A bound or a load as people write it: 500, 0.5, 3600000 (never 3.6e+06)."""
    value = float(value)
    return str(int(value)) if value.is_integer() else f"{value:.4g}"


def slo_words(slo):
    """The SLO in words: "p90 TTFT ≤ 500 ms and score ≥ 70" ("" for an empty one)."""
    parts = [f"{words} ≤ {number(slo[key])} ms" for key, _, _, words in BOUNDS if key in slo]
    if "minScore" in slo:
        parts.append(f"score ≥ {number(slo['minScore'])}")
    if len(parts) > 1:
        return ", ".join(parts[:-1]) + " and " + parts[-1]
    return "".join(parts)


def run_goodput(run, slo=None, speed=None):
    """{"slo", "words", "loadMode", "targets": [figures per target, in the run's order]} of
    `run` against `slo` (default: the run's own; None when it has none; {} counts every answer
    that did not auto-fail). `speed`: run_speed(run), when a caller has it.

    A target's figures: its answers, good answers, their share and goodput, the SLO's
    attainment (each bound against run_speed's percentile, the average score against
    minScore, and whether all hold), its steps with the same figures each, the highest load
    step that meets the SLO and a sentence saying so.

    A run whose items have not changed since the last call with the same SLO is not read
    again (a small cache, as run_speed's)."""
    if slo is None:
        slo = run_slo(run)
        if not slo:
            return None
    slo = dict(slo)
    stamp = speed_stamp(run)
    settings = run.settings or {}
    key = (run.id, run.run_id, stamp, repr(sorted(slo.items())), repr(settings.get("load")))
    key += (repr(settings.get("concurrency")),)
    cached = _cache.get(key) if stamp is not None else None
    if cached is not None:
        return cached
    result = _work_out(run, slo, run_speed(run) if speed is None else speed)
    if stamp is not None:
        _cache.put(key, result)
    return result


# The latest figures of a few runs and SLOs, by (run, latest item change, SLO, load): a
# finished run's page and its exports decode 100 000 answers' gaps once, not on every view.
_cache = Recent(16)


def _work_out(run, slo, speed):
    settings = run.settings or {}
    load = settings.get("load") if isinstance(settings.get("load"), dict) else {}
    steps_load = load.get("steps") if isinstance(load.get("steps"), list) else []
    mode = load.get("mode") if steps_load else None
    need_itl = "itlP90Ms" in slo
    answers = _columns(_read(run, need_itl), slo, need_itl)
    out = []
    for target in speed["targets"]:
        tid = target["targetId"]
        mask = answers["target"] == tid
        # The whole target's percentiles are run_speed's (they match the speed table).
        whole = _group(answers, mask)
        spoken = {key: target[fig][name] for key, fig, name, _ in BOUNDS}
        whole["attainment"] = _attainment(slo, spoken, whole["avgScore"])
        whole["met"] = all(a["met"] for a in whole["attainment"].values())
        numbers = sorted(set(answers["step"][mask].tolist()))
        steps = []
        for step in numbers:
            if len(numbers) == 1:  # one step: the whole target, percentiles and all
                one = dict(whole)
            else:
                one = _group(answers, mask & (answers["step"] == step), percentiles=True)
                one["attainment"] = _attainment(slo, one.pop("percentiles"), one["avgScore"])
                one["met"] = all(a["met"] for a in one["attainment"].values())
            value = _step_load(settings, steps_load, step)
            steps.append({"step": step, "load": value, "loadText": load_text(mode, value), **one})
        best = max(
            (s for s in steps if s["met"]),
            key=lambda s: (s["load"] is not None, s["load"] or 0, s["step"]),
            default=None,
        )
        highest = None if best is None else {"step": best["step"], "load": best["load"]}
        out.append(
            {
                "targetId": tid,
                "label": target["label"],
                "slo": slo,
                **whole,
                "steps": steps,
                "highestLoad": highest,
                "sentence": _sentence(target["label"], slo, mode, best),
            }
        )
    return {"slo": slo, "words": slo_words(slo), "loadMode": mode, "targets": out}


def _step_load(settings, steps_load, step):
    """A step's load: settings.load.steps[step], or the run's concurrency for a run without
    steps; None when neither says."""
    if steps_load:
        value = steps_load[step] if 0 <= step < len(steps_load) else None
    else:
        value = settings.get("concurrency") if step == 0 else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def load_text(mode, load):
    """A step's load in words ("concurrency 4", "2 requests/s"); None when it is unknown."""
    if load is None:
        return None
    words = LOAD_WORDS.get(mode or "concurrency", LOAD_WORDS["concurrency"])
    return words.format(load=number(load))


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


def _columns(rows, slo, need_itl):
    """The answers as numpy columns (None as NaN), each answer's gaps decoded (when the SLO
    bounds ITL) and whether it is good: the time and score bounds at once over the columns,
    the ITL bound per answer from its own gaps."""
    n = len(rows)
    cols = list(zip(*rows, strict=True)) if rows else [()] * 9

    def floats(i):
        return np.array([np.nan if v is None else v for v in cols[i]], dtype=float).reshape(n)

    out = {
        "target": np.array(cols[0], dtype=np.int64).reshape(n),
        "step": np.array([v or 0 for v in cols[1]], dtype=np.int64).reshape(n),
        "e2e": floats(2),
        "ttft": floats(3),
        "sent": floats(4),
        "tokens": floats(5),
        "score": floats(7),
    }
    good = ~np.array([bool(v) for v in cols[8]], dtype=bool).reshape(n)
    with np.errstate(invalid="ignore"):  # NaN compares False: an unknown figure misses
        if "ttftP90Ms" in slo:
            good &= out["ttft"] <= slo["ttftP90Ms"]
        if "e2eP95Ms" in slo:
            good &= out["e2e"] <= slo["e2eP95Ms"]
        if "minScore" in slo:
            good &= out["score"] >= slo["minScore"]
    gaps = [None] * n
    if need_itl:
        decoded = {}  # many answers share a histogram (same length, same pace)
        for i, blob in enumerate(cols[6]):
            if blob:
                blob = bytes(blob)
                if blob not in decoded:
                    lists = unpack_lists(blob)
                    own = figures(*lists, names=("p90",))
                    decoded[blob] = (lists, None if own is None else own["p90"])
                gaps[i], itl_p90 = decoded[blob]
                if itl_p90 is not None and itl_p90 > slo["itlP90Ms"]:
                    good[i] = False
    out["gaps"] = gaps
    out["good"] = good
    return out


def _group(answers, mask, percentiles=False):
    """The goodput figures of the answers `mask` picks (a target, or one step of it); with
    `percentiles`, their own p90 TTFT, p90 ITL (gaps merged) and p95 e2e too."""
    count = int(mask.sum())
    good = int(answers["good"][mask].sum())
    scores = answers["score"][mask]
    scores = scores[~np.isnan(scores)]
    span = window(answers["sent"][mask], answers["e2e"][mask], answers["tokens"][mask])
    seconds = span["seconds"]
    out = {
        "answers": count,
        "good": good,
        "goodShare": good / count if count else None,
        "goodput": good / seconds if seconds else None,
        "windowSeconds": seconds,
        "reason": span["reason"],
        "avgScore": float(scores.mean()) if scores.size else None,
    }
    if percentiles:
        merged = {}
        for i in np.flatnonzero(mask).tolist():
            if answers["gaps"][i]:
                for b, n in zip(*answers["gaps"][i], strict=True):
                    merged[b] = merged.get(b, 0) + n
        ordered = sorted(merged.items())
        itl = figures([b for b, _ in ordered], [n for _, n in ordered], ("p90",))
        ttft = answers["ttft"][mask]
        out["percentiles"] = {
            "ttftP90Ms": percentile(np.sort(ttft[~np.isnan(ttft)]).tolist(), 0.90),
            "itlP90Ms": None if itl is None else itl["p90"],
            "e2eP95Ms": percentile(np.sort(answers["e2e"][mask]).tolist(), 0.95),
        }
    return out


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
