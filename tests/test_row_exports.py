"""The per-row shortcuts of the downloads with a row per item (results.md, the detailed CSV)
write the same bytes as the plain way: a number's text, a Markdown row, a CSV line."""

import io
import random

from app.exports.csvfiles import _chunks
from app.exports.csvfiles import _fast_chunks
from app.exports.markdown import _row
from app.exports.markdown import _text_row
from app.exports.rows import REMEMBERED
from app.exports.rows import number
from app.exports.rows import number_memo
from app.files.csvcells import SafeWriter
from app.files.csvcells import mixed_lines


def rounded_text(value, digits=2):
    """number() as it was written first: round, then integral or the shortest repr."""
    if value is None:
        return ""
    if value.__class__ is int:
        return str(value)
    rounded = round(float(value), digits)
    if rounded.is_integer():
        return str(int(rounded))
    return repr(rounded)


def numbers(rng, count):
    values = [0.0, -0.0, 0.005, 0.015, 2.675, -2.675, 1e-5, 5e-5, 1.5e-4, 999999999.995]
    values += [-999999999.995, 1e9, 1e12 + 0.125, float("inf"), float("nan"), True, 40.5]
    for _ in range(count):
        values.append(rng.choice((1, -1)) * 10 ** rng.uniform(-6, 10))
        values.append(round(rng.uniform(-1000, 1000), 3))  # halfway cases at 2 digits
        values.append(rng.randint(-(10**6), 10**6) / 1000 + 0.0005)
        values.append(rng.randint(-(10**9), 10**9))
    return values


def test_a_numbers_text_is_its_rounded_value_as_before_at_every_precision():
    rng = random.Random(33)
    for value in numbers(rng, 20000):
        for digits in (0, 1, 2, 3, 4):
            assert number(value, digits) == rounded_text(value, digits), (value, digits)


def test_a_negative_value_that_rounds_to_zero_reads_zero():
    assert number(-0.001) == "0"
    assert number(-0.04, 1) == "0"


def test_a_markdown_row_of_plain_text_is_the_row_cell_by_cell():
    rng = random.Random(7)
    alphabet = ["a", "Z", " ", ",", "é", "✓", "'", ";", "\t", "1.5", "", "-"]
    special = ["&", "<", ">", "|", "\n", "\r", "\r\n", "&amp;"]
    for n in range(3000):
        letters = alphabet + special if n % 2 else alphabet
        texts = tuple(
            "".join(rng.choice(letters) for _ in range(rng.randint(0, 10))) for _ in range(12)
        )
        assert _text_row(texts) == _row(texts)


def test_a_markdown_row_with_a_value_that_is_not_text_is_written_as_text():
    assert _text_row(("a", None, 3, 2.5)) == _row(("a", None, 3, 2.5)) == "| a |  | 3 | 2.5 |\n"


def test_fast_csv_lines_match_the_csv_module_for_formulas_and_plain_rows():
    rng = random.Random(11)
    starts = ["=", "+", "-", "@", "\t", "\r", "'", "''=", "\uff1d", "\uff0b", "\uff0d", "\uff20"]
    plain = ["a", "Z", " ", "é", "✓", "1.5", "|", ";", ""]
    rows = []
    for n in range(3000):
        fields = []
        for _ in range(12):
            text = "".join(rng.choice(plain) for _ in range(rng.randint(0, 8)))
            if n % 3 == 0 and rng.random() < 0.2:
                text = rng.choice(starts) + text
            if n % 5 == 0 and rng.random() < 0.2:
                text += rng.choice([",", '"', "\n", "\r\n"])
            fields.append(text)
        rows.append(tuple(fields))
    header = ("a", "b", "c")
    assert "".join(_fast_chunks(header, rows)) == "".join(_chunks(header, rows))


def test_a_remembered_numbers_text_is_numbers_text_for_every_value_and_its_equals():
    rng = random.Random(5)
    values = numbers(rng, 2000)
    values += [1, 1.0, True, 0, -0.0, 10**16, 1e16, None] * 3
    for digits in (1, 2):
        text = number_memo(digits)
        for value in values + values:
            assert text(value) == number(value, digits), (value, digits)


def test_a_remembered_numbers_texts_stay_few():
    text = number_memo()
    for n in range(3 * REMEMBERED):
        text(n + 0.5)
    (memo,) = [c.cell_contents for c in text.__closure__ if isinstance(c.cell_contents, dict)]
    assert 0 < len(memo) <= REMEMBERED


def test_mixed_csv_lines_match_the_csv_module_for_text_numbers_and_none():
    rng = random.Random(13)
    starts = ["=", "+", "-", "@", "\t", "\r", "'", "''=", "\uff1d", ""]
    texts = ["a", "é ✓", ",", '"', "\n", "\r\n", "1.5", " ", ""]
    numbers_ = [0, -1, 7, 2.5, -0.25, 1e-05, 1e22, float("inf"), float("-inf"), float("nan")]
    rows = []
    for _ in range(3000):
        row = []
        for _ in range(rng.randint(1, 10)):
            kind = rng.random()
            if kind < 0.2:
                row.append(None)
            elif kind < 0.5:
                row.append(rng.choice(numbers_))
            else:
                row.append(rng.choice(starts) + "".join(rng.choices(texts, k=rng.randint(0, 4))))
        rows.append(tuple(row))
    rows = [row for row in rows if row not in ((None,), ("",))]  # csv quotes a lone empty cell
    buffer = io.StringIO()
    SafeWriter(buffer).writerows(rows)
    assert mixed_lines(rows) == buffer.getvalue()
