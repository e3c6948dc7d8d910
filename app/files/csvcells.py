"""CSV cells a spreadsheet will not run as formulas (OWASP "CSV Injection").

A cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return (or their full-width
forms) is read by Excel, LibreOffice and Google Sheets as a formula: `=HYPERLINK(...)` in a
model's answer could leak the sheet when a person opens the export. Every text cell we write to
a CSV goes through `neutralise`, which puts a `'` in front (the spreadsheet shows the text as
it is). Cells that already start with quotes before such a character get one more, so
`restore` (used when our own CSV is imported again) gives back exactly the original text.

Every CSV we write (web, API, CLI, labels, votes, reports) goes through `SafeWriter` (or
`fast_lines` and `mixed_lines`, its faster twins for long text), never a bare `csv.writer`.
"""

import csv
import re

# The characters a spreadsheet treats as the start of a formula, and their full-width forms.
_FORMULA = "=+-@\t\r\uff1d\uff0b\uff0d\uff20"
_NEEDS_QUOTE = re.compile(f"^'*[{re.escape(_FORMULA)}]")
# First characters worth a regex match: most cells (numbers, words) are passed on one set lookup.
_SUSPECT = frozenset(_FORMULA + "'")
_QUOTED = re.compile(f"^'+[{re.escape(_FORMULA)}]")


def neutralise(text):
    """`text` made safe as a CSV cell: a `'` in front when a spreadsheet would run it."""
    if isinstance(text, str) and text[:1] in _SUSPECT and _NEEDS_QUOTE.match(text):
        return "'" + text
    return text


def restore(text):
    """The original text of a cell `neutralise` wrote (other text is returned as it is)."""
    if isinstance(text, str) and _QUOTED.match(text):
        return text[1:]
    return text


def safe_row(row):
    """`row` with every text cell neutralised (numbers and None are not text a sheet runs)."""
    return [neutralise(cell) for cell in row]


class SafeWriter:
    """A `csv.writer` that neutralises every cell: the one way our CSVs are written, so no
    producer can forget a column (a new one included)."""

    def __init__(self, buffer, **options):
        options.setdefault("lineterminator", "\r\n")
        self._writer = csv.writer(buffer, **options)

    def writerow(self, row):
        return self._writer.writerow(safe_row(row))

    def writerows(self, rows):
        for row in rows:
            self._writer.writerow(safe_row(row))


def _quote(field):
    """One RFC 4180 field, exactly as csv.writer's QUOTE_MINIMAL writes a string."""
    if '"' in field or "," in field or "\n" in field or "\r" in field:
        return '"' + field.replace('"', '""') + '"'
    return field


# A field after the first that starts like a formula (or with a quote), in a line whose commas
# are all separators.
_LATER_SUSPECT = re.compile(f",[{re.escape(''.join(sorted(_SUSPECT)))}]")


def _plain(line, fields):
    """Whether `line`, the `fields` joined by commas, is already their CSV line: no field holds a
    comma, quote, CR or LF, nor starts as neutralise() would change it (a few searches of the
    whole line instead of two calls per field)."""
    return (
        line.count(",") == fields - 1
        and '"' not in line
        and "\n" not in line
        and "\r" not in line
        and line[:1] not in _SUSPECT
        and _LATER_SUSPECT.search(line) is None
    )


def fast_lines(rows):
    """CSV text (CRLF) for rows of strings, neutralised: the same bytes as `SafeWriter`, twice
    as fast for long answers (csv.writer scans them char by char; four substring searches run
    at memchr speed), and a row whose fields need nothing is joined as it is."""
    lines = []
    for row in rows:
        line = ",".join(row)
        if not _plain(line, len(row)):
            line = ",".join([_quote(neutralise(f)) for f in row])
        lines.append(line + "\r\n")
    return "".join(lines)


# None's cell is empty, as csv.writer writes it; every other value is its own (map(get, r, r)).
_EMPTY = {None: ""}


def mixed_lines(rows):
    """`SafeWriter`'s CSV text (CRLF) for rows of two or more str, int, float and None cells
    (csv.writer quotes a lone empty cell): numbers written as csv.writer writes them (str) and
    never neutralised (a negative number is no formula), None empty, text as fast_lines writes
    it. A row whose joined text needs nothing costs one join and a few searches, at C speed,
    instead of a neutralise call per cell."""
    get = _EMPTY.get
    lines = []
    for row in rows:
        line = ",".join(map(str, map(get, row, row)))
        if not _plain(line, len(row)):
            line = ",".join(
                [
                    _quote(neutralise(c)) if c.__class__ is str else str(c)
                    for c in map(get, row, row)
                ]
            )
        lines.append(line + "\r\n")
    return "".join(lines)
