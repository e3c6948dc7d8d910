"""A run's samples as a compact series: short keys, rounded values, downsampling, peaks.

One encoded row per sample, e.g. (a GPU box, one model loaded, first row of the series):

    {"t":1732380000,"c":37,"r":11.42,"p":182,"g":64,"v":6.31,"R":31.26,"V":24.0,"n":1,
     "m":[["llama3.1:8b-instruct-q4_K_M",5.61,5.61]]}

and every later row while nothing slow changes:

    {"t":1732380002,"c":41,"r":11.43,"p":182,"g":71,"v":6.31}

Fast fields (t, c, r, p, g, v) are in every row and left out when None. Slow fields (R, V, n,
m: totals, GPU count, loaded models) are written only when they differ from the row before
(null when they became unknown); decode_series carries them forward.

Budget for a 10 h run at one sample per 2 s (18 000 rows), as one JSON array with no spaces: a
row is about 58 bytes on a GPU box (about 42 without a GPU), so about 1.05 MB in all (0.75 MB
without a GPU), plus about 45 bytes per loaded model each time the loaded set changes: under
the 2 MB goal without downsampling (bench/bench_sysmetrics.py measures it). downsample() bounds
it whatever the run length: every sample of the last hour plus one per 30 s before it is
1 801 + 1 080 rows, about 170 KB, for 10 h.
"""

FAST = ("cpuPercent", "ramUsedGb", "rssMb", "gpuUtilPercent", "vramUsedGb")
SLOW = ("ramTotalGb", "vramTotalGb", "gpuCount", "loadedModels")
# name -> (short key, decimals; 0 means a whole number). 0.01 GiB is 10 MiB; whole percents and
# MiB are finer than a 2 s reading's own noise.
FIELDS = {
    "t": ("t", 0),
    "cpuPercent": ("c", 0),
    "ramUsedGb": ("r", 2),
    "rssMb": ("p", 0),
    "gpuUtilPercent": ("g", 0),
    "vramUsedGb": ("v", 2),
    "ramTotalGb": ("R", 2),
    "vramTotalGb": ("V", 2),
    "gpuCount": ("n", 0),
}
MODELS_KEY = "m"
RECENT_SECONDS = 3600
OLDER_STEP_SECONDS = 30


class SeriesEncoder:
    """Encodes one series' samples in order, remembering the slow fields already written."""

    def __init__(self):
        self._slow = None

    def encode(self, sample):
        """The compact row for `sample` (a dict with "t" and take_sample()'s fields)."""
        row = {}
        for name in ("t", *FAST):
            value = _round(sample.get(name), FIELDS[name][1])
            if value is not None:
                row[FIELDS[name][0]] = value
        slow = {name: _encode_slow(name, sample.get(name)) for name in SLOW}
        for name, value in slow.items():
            if self._slow is None or self._slow[name] != value:
                row[_short(name)] = value
        self._slow = slow
        return row


def encode_series(samples):
    """Compact rows for samples in time order (the first row carries every slow field)."""
    encoder = SeriesEncoder()
    return [encoder.encode(sample) for sample in samples]


def decode_series(rows):
    """Samples (long names, None where unknown) from rows made by encode_series/SeriesEncoder."""
    slow = dict.fromkeys(SLOW)
    samples = []
    for row in rows:
        sample = {name: row.get(FIELDS[name][0]) for name in ("t", *FAST)}
        for name in SLOW:
            if _short(name) in row:
                slow[name] = _decode_slow(name, row[_short(name)])
        sample.update(slow)
        samples.append(sample)
    return samples


def downsample(samples, now=None, recent_seconds=RECENT_SECONDS, step_seconds=OLDER_STEP_SECONDS):
    """Every sample newer than `now - recent_seconds`, one per `step_seconds` bucket before.

    Pure; samples are in time order, `now` defaults to the last sample's t. An older bucket
    becomes one sample at the bucket's first t with the MAX of each fast field (like RRDtool's
    MAX consolidation) and the slow fields of its last sample, so peaks() of the result equals
    peaks() of the input, and running it again with the same `now` changes nothing.
    """
    if not samples:
        return []
    if now is None:
        now = samples[-1]["t"]
    cutoff = now - recent_seconds
    out = []
    bucket = None
    for sample in samples:
        if sample["t"] >= cutoff:
            out.append(sample)
            continue
        key = sample["t"] // step_seconds
        if bucket is not None and bucket[0] == key:
            bucket[1] = _merge(bucket[1], sample)
            out[-1] = bucket[1]
        else:
            bucket = [key, dict(sample)]
            out.append(bucket[1])
    return out


def compact(rows, now=None):
    """Stored rows downsampled and re-encoded (what a long run's storage is trimmed with)."""
    return encode_series(downsample(decode_series(rows), now=now))


def peaks(samples):
    """The maximum of each fast field over `samples` (decoded or straight from take_sample):
    {cpuPercent, ramUsedGb, rssMb, gpuUtilPercent, vramUsedGb}, None where never known."""
    result = dict.fromkeys(FAST)
    for sample in samples:
        for name in FAST:
            value = sample.get(name)
            if value is not None and (result[name] is None or value > result[name]):
                result[name] = value
    return result


def _merge(kept, sample):
    """`kept` with each fast field raised to `sample`'s and `sample`'s slow fields."""
    merged = dict(kept)
    for name in FAST:
        value = sample.get(name)
        if value is not None and (merged.get(name) is None or value > merged[name]):
            merged[name] = value
    for name in SLOW:
        merged[name] = sample.get(name)
    return merged


def _short(name):
    """The short key of a slow field."""
    return MODELS_KEY if name == "loadedModels" else FIELDS[name][0]


def _encode_slow(name, value):
    """A slow field's compact value: models as [name, sizeGb, vramGb] triples."""
    if name != "loadedModels":
        return _round(value, FIELDS[name][1])
    if value is None:
        return None
    return [[m["name"], _round(m["sizeGb"], 2), _round(m["vramGb"], 2)] for m in value]


def _decode_slow(name, value):
    """The long form of a slow field's compact value."""
    if name != "loadedModels" or value is None:
        return value
    return [{"name": n, "sizeGb": size, "vramGb": vram} for n, size, vram in value]


def _round(value, decimals):
    """Rounded for storage (int when decimals is 0), None kept."""
    if value is None:
        return None
    if decimals == 0:
        return int(round(value))
    return round(value, decimals)
