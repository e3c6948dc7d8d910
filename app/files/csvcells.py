"""CSV cells a spreadsheet will not run as formulas (OWASP "CSV Injection").

A cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return (or their full-width
forms) is read by Excel, LibreOffice and Google Sheets as a formula: `=HYPERLINK(...)` in a
model's answer could leak the sheet when a person opens the export. Every text cell we write to
a CSV goes through `neutralise`, which puts a `'` in front (the spreadsheet shows the text as
it is). Cells that already start with quotes before such a character get one more, so
`restore` (used when our own CSV is imported again) gives back exactly the original text.
"""

import re

# The characters a spreadsheet treats as the start of a formula, and their full-width forms.
_FORMULA = "=+-@\t\r\uff1d\uff0b\uff0d\uff20"
_NEEDS_QUOTE = re.compile(f"^'*[{re.escape(_FORMULA)}]")
_QUOTED = re.compile(f"^'+[{re.escape(_FORMULA)}]")


def neutralise(text):
    """`text` made safe as a CSV cell: a `'` in front when a spreadsheet would run it."""
    if isinstance(text, str) and _NEEDS_QUOTE.match(text):
        return "'" + text
    return text


def restore(text):
    """The original text of a cell `neutralise` wrote (other text is returned as it is)."""
    if isinstance(text, str) and _QUOTED.match(text):
        return text[1:]
    return text
