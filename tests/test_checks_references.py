"""Reference metrics give the reference implementations' figures (rouge-score, sacrebleu,
rapidfuzz) on a fixed corpus: empty texts, unicode, punctuation, numbers and long texts."""

import random

import pytest
import sacrebleu
from rapidfuzz import fuzz
from rouge_score import rouge_scorer

from app.scoring.checks import references
from app.scoring.checks.evaluate import run_check
from app.scoring.checks.spec import CheckError
from app.scoring.checks.spec import parse_checks


def _long(count, which):
    rng = random.Random(which)
    words = "the a of cat sat on mat river bank 42 3.14 don't co-op U.S. café naïve".split()
    return " ".join(rng.choice(words) for _ in range(count))


TEXTS = [
    "",
    " ",
    "Paris",
    "The capital of France is Paris.",
    "the capital of france is paris",
    "Paris is the capital of France, and it's on the Seine.",
    "PARIS!!! is... the capital (of France)?",
    "Le café est naïve à Montréal; ÉCOLE élève.",
    "東京は日本の首都です。 東京 タワー",
    "I love it 😀😀 🎉 emoji-only 🚀",
    "x = 3/4, y = -3e2; 1,234.5 & <tag> &amp; &quot;quoted&quot;",
    "line one\nline two-\nthree\tfour",
    "İstanbul ß straße ﬁne",
]
LONG = [_long(1200, 1), _long(1500, 2)]
# Every pair of short texts; long texts against each other and a few others (rouge-score's
# own LCS takes a second on two of them).
PAIRS = [(a, r) for a in TEXTS for r in TEXTS] + [
    (LONG[0], LONG[1]),
    (LONG[0], ""),
    ("", LONG[1]),
    (LONG[0], TEXTS[5]),
    (TEXTS[7], LONG[1]),
]


def rouge_score(key, answer, reference):
    scorer = rouge_scorer.RougeScorer([key], use_stemmer=False)
    return scorer.score(reference, answer)[key].fmeasure * 100


@pytest.mark.parametrize("kind, key", [(1, "rouge1"), (2, "rouge2")])
def test_rouge_n_equals_rouge_score(kind, key):
    for answer, reference in PAIRS:
        expected = rouge_score(key, answer, reference)
        assert references.rouge_n(answer, reference, kind) == pytest.approx(expected, abs=1e-9)


def test_rouge_l_equals_rouge_score():
    for answer, reference in PAIRS:
        expected = rouge_score("rougeL", answer, reference)
        assert references.rouge_l(answer, reference) == pytest.approx(expected, abs=1e-9)


def test_bleu_equals_sacrebleu_sentence_bleu():
    for answer, reference in PAIRS:
        expected = sacrebleu.sentence_bleu(answer, [reference]).score
        assert references.bleu(answer, reference) == pytest.approx(expected, abs=1e-9)


def test_chrf_equals_sacrebleu_sentence_chrf():
    for answer, reference in PAIRS:
        expected = sacrebleu.sentence_chrf(answer, [reference]).score
        assert references.chrf(answer, reference) == pytest.approx(expected, abs=1e-9)


def test_similarity_equals_rapidfuzz_ratio():
    for answer, reference in PAIRS:
        assert references.similarity(answer, reference) == fuzz.ratio(answer, reference)


def test_lcs_length_matches_the_table_on_edge_sequences():
    for a, b, length in [("", "abc", 0), ("abc", "abc", 3), ("abcbdab", "bdcaba", 4)]:
        assert references.lcs_length(list(a), list(b)) == length


def test_rouge_tokens_are_lower_case_ascii_letters_and_digits():
    assert references.rouge_tokens("Don't STOP, café 3.14!") == [
        "don",
        "t",
        "stop",
        "caf",
        "3",
        "14",
    ]


def test_a_metric_below_its_threshold_fails_saying_both():
    (check,) = parse_checks([{"type": "rouge-l"}], has_reference=True)
    result = run_check(check, "the cat", reference="the cat sat on the mat today")
    assert result.reason == "ROUGE-L 44.4 < 50" and not result.passed
    assert result.score == pytest.approx(400 / 9)


def test_a_metric_at_its_threshold_passes():
    (check,) = parse_checks([{"type": "similarity", "value": "abcd", "threshold": 75}])
    result = run_check(check, "abc")
    assert result.passed and result.reason == "similarity 85.7 ≥ 75"


def test_the_check_value_is_the_reference_over_the_task_s_excellent_answer():
    (check,) = parse_checks([{"type": "rouge-1", "value": "blue sky"}])
    assert run_check(check, "blue sky", reference="green grass").score == 100.0


def test_without_any_reference_at_run_time_the_check_fails_with_a_reason():
    (check,) = parse_checks([{"type": "bleu"}], has_reference=True)
    result = run_check(check, "anything", reference=None)
    assert not result.passed and result.reason.startswith("no reference to compare with")


def test_texts_past_the_cap_are_scored_on_their_start_and_the_reason_says_so():
    (check,) = parse_checks([{"type": "rouge-1", "value": "word " * 10}])
    result = run_check(check, "word " * 30_000)
    assert result.reason.endswith(f"(first {references.MAX_CHARS} characters)")


def test_similarity_with_max_edits_passes_within_that_many_levenshtein_edits():
    (check,) = parse_checks([{"type": "similarity", "value": "Paris", "max_edits": 1}])
    result = run_check(check, "Paris.")
    assert (result.passed, result.reason) == (True, "1 edit ≤ 1")


def test_similarity_with_max_edits_fails_past_them_however_short_the_text():
    (check,) = parse_checks([{"type": "similarity", "value": "Paris", "max_edits": 5}])
    result = run_check(check, "The capital of France is Paris.")
    assert (result.passed, result.reason) == (False, "26 edits > 5")


def test_max_edits_must_be_a_whole_number():
    with pytest.raises(CheckError, match=r"max_edits"):
        parse_checks([{"type": "similarity", "value": "Paris", "max_edits": 1.5}])
