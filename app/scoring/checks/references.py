"""Reference checks: how close the answer is to a reference text (the task's excellent answer,
or the check's value), 0-100.

ROUGE-1/2/L are rouge-score's F-measures (no stemmer) and BLEU and chrF sacrebleu's sentence
scores (defaults: BLEU 13a tokens, exp smoothing, effective order; chrF 6 character orders,
beta 2), computed here to the same figures (tests compare them) but much faster: ROUGE-L's
longest common subsequence is bit-parallel, not rouge-score's O(n*m) table. `similarity` is
rapidfuzz's fuzz.ratio (an edit-distance ratio). Texts past MAX_CHARS are cut to their first
MAX_CHARS characters, which bounds every metric (well under a second)."""

import math
import re
from collections import Counter

from .reasons import metric
from .reasons import num

MAX_CHARS = 100_000
_ROUGE_TOKEN = re.compile(r"[a-z0-9]+")
# sacrebleu's 13a tokenizer (mteval-v13a): its first substitution, r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"
# -> r" \1 ", as one str.translate (spaces around each of these characters, 5x faster), then
# its other three, in order.
_13A_SPACED = str.maketrans({c: f" {c} " for c in '{|}~[\\]^_` !"#$%&()*+:;<=>?@/'})
_13A = (
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
)
BLEU_ORDER = 4
CHRF_ORDER = 6
CHRF_BETA = 2


def rouge_tokens(text):
    """rouge-score's tokens: lower case, runs of a-z0-9 (everything else separates)."""
    return _ROUGE_TOKEN.findall(text.lower())


def _f_measure(precision, recall):
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def _grams(tokens, n):
    # zip stops at the shortest slice: the last n-gram (strict=False on purpose).
    return Counter(zip(*(tokens[i:] for i in range(n)), strict=False))


def rouge_n(answer, reference, n):
    """ROUGE-N F-measure (0-100) of the answer against the reference."""
    got, want = rouge_tokens(answer), rouge_tokens(reference)
    got_grams = _grams(got, n)
    want_grams = _grams(want, n)
    common = sum(min(count, got_grams[gram]) for gram, count in want_grams.items())
    precision = common / max(sum(got_grams.values()), 1)
    recall = common / max(sum(want_grams.values()), 1)
    return 100 * _f_measure(precision, recall)


def lcs_length(a, b):
    """Length of the longest common subsequence of two sequences (Hyyrö's bit-parallel form:
    one big-int step per item of b, the bits standing for a's positions)."""
    if len(a) < len(b):
        a, b = b, a
    masks = {}
    for i, item in enumerate(a):
        masks[item] = masks.get(item, 0) | (1 << i)
    row = (1 << len(a)) - 1
    for item in b:
        match = masks.get(item)
        if match:
            low = row & match
            row = (row + low) | (row - low)
    return len(a) - (row & ((1 << len(a)) - 1)).bit_count()


def rouge_l(answer, reference):
    """ROUGE-L F-measure (0-100) of the answer against the reference."""
    got, want = rouge_tokens(answer), rouge_tokens(reference)
    if not got or not want:
        return 0.0
    common = lcs_length(want, got)
    return 100 * _f_measure(common / len(got), common / len(want))


def bleu_tokens(text):
    """sacrebleu's 13a tokens of a text."""
    line = text.rstrip().replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"').replace("&amp;", "&")
        line = line.replace("&lt;", "<").replace("&gt;", ">")
    line = f" {line} ".translate(_13A_SPACED)
    for pattern, replacement in _13A:
        line = pattern.sub(replacement, line)
    return line.split()


def _word_grams(tokens):
    return Counter(
        tuple(tokens[i : i + n])
        for n in range(1, BLEU_ORDER + 1)
        for i in range(len(tokens) - n + 1)
    )


def bleu(answer, reference):
    """Sentence BLEU (0-100) as sacrebleu.sentence_bleu gives it."""
    got, want = bleu_tokens(answer), bleu_tokens(reference)
    want_grams = _word_grams(want)
    correct, total = [0] * BLEU_ORDER, [0] * BLEU_ORDER
    for gram, count in _word_grams(got).items():
        total[len(gram) - 1] += count
        if gram in want_grams:
            correct[len(gram) - 1] += min(count, want_grams[gram])
    if not any(correct):
        return 0.0
    penalty = 1.0
    if len(got) < len(want):
        penalty = math.exp(1 - len(want) / len(got)) if got else 0.0
    precisions, smooth, order = [0.0] * BLEU_ORDER, 1.0, BLEU_ORDER
    for n in range(1, BLEU_ORDER + 1):
        if total[n - 1] == 0:
            break
        order = n  # effective order: orders the answer is too short for do not count
        if correct[n - 1] == 0:
            smooth *= 2
            precisions[n - 1] = 100.0 / (smooth * total[n - 1])
        else:
            precisions[n - 1] = 100.0 * correct[n - 1] / total[n - 1]
    logs = [math.log(p) if p else -9999999999 for p in precisions[:order]]
    return penalty * math.exp(sum(logs) / order)


def _char_grams(text):
    line = "".join(text.split())
    return [
        Counter(line[i : i + n] for i in range(len(line) - n + 1)) for n in range(1, CHRF_ORDER + 1)
    ]


def chrf(answer, reference):
    """Sentence chrF (0-100) as sacrebleu.sentence_chrf gives it."""
    factor = CHRF_BETA**2
    avg_precision = avg_recall = 0.0
    orders = 0
    for got, want in zip(_char_grams(answer), _char_grams(reference), strict=True):
        n_got, n_want = sum(got.values()), sum(want.values())
        if n_got and n_want:
            common = sum(min(got[gram], want[gram]) for gram in got.keys() & want.keys())
            avg_precision += common / n_got
            avg_recall += common / n_want
            orders += 1
    if orders == 0:
        return 0.0
    avg_precision /= orders
    avg_recall /= orders
    if not avg_precision + avg_recall:
        return 0.0
    # In sacrebleu's order of operations, so the figures agree to the last bit.
    score = (1 + factor) * avg_precision * avg_recall
    score /= (factor * avg_precision) + avg_recall
    return 100 * score


def similarity(answer, reference):
    """Edit-distance ratio (0-100), rapidfuzz's fuzz.ratio."""
    # Lazy: rapidfuzz (~15-40 ms to import) only where a similarity or edit check is scored;
    # every run's scoring loads this module, most of their tasks have no such check.
    from rapidfuzz import fuzz

    return fuzz.ratio(answer, reference)


METRICS = {
    "rouge-1": ("ROUGE-1", lambda a, r: rouge_n(a, r, 1)),
    "rouge-2": ("ROUGE-2", lambda a, r: rouge_n(a, r, 2)),
    "rouge-l": ("ROUGE-L", rouge_l),
    "bleu": ("BLEU", bleu),
    "chrf": ("chrF", chrf),
    "similarity": ("similarity", similarity),
}


def compare(check, answer, context):
    reference = check.value if check.value is not None else context.reference
    if not reference:
        return 0.0, "no reference to compare with (the task has no excellent answer)"
    name, measure = METRICS[check.type]
    cut = f" (first {MAX_CHARS} characters)" if max(len(answer), len(reference)) > MAX_CHARS else ""
    most = check.options.get("max_edits")
    if most is not None:
        from rapidfuzz.distance import Levenshtein  # lazy, as in similarity()

        edits = Levenshtein.distance(answer[:MAX_CHARS], reference[:MAX_CHARS])
        sign = "≤" if edits <= most else ">"
        unit = "edit" if edits == 1 else "edits"
        return (100.0 if edits <= most else 0.0), f"{edits} {unit} {sign} {most}{cut}"
    score = measure(answer[:MAX_CHARS], reference[:MAX_CHARS])
    sign = "≥" if score >= check.threshold else "<"
    return score, f"{name} {metric(score)} {sign} {num(check.threshold)}{cut}"


EVALUATORS = dict.fromkeys(METRICS, compare)
