"""Reading the picked option letter or the number out of a free-text answer.

The option letter (`pick_choice`), first rule that finds one wins:
1. the last explicit answer: "answer is B", "Answer: b", "correct option is (B)", "I choose B"
   (the last, because a model that changes its mind says its final word last);
2. the whole answer is a letter: "B", "**B**", "(b).";
3. the answer starts with one: "B) because…", "(C) 42", "**D**: …";
4. "C is correct", then "it's C" / "it is C" (so "I think it's C, not B" picks C), then
   "option C" when every such phrase names the same letter;
5. one distinct letter in bold or parentheses, then one distinct capital letter standing alone.
A lower-case letter counts only right after an explicit answer, as the whole answer or before
")" at the start; "A" and "I" before a lower-case word (but and/or) are words ("A cat", "I
think"), not options. None when no rule
finds one, or only ambiguous ones.

The number (`pick_number`), read as a worked answer gives it: inside \\boxed{…}; else the last
after "answer" (is, =, :); else the last in bold (headings such as "**Step 1:**" left out;
"**4! × 2 = 48**" 48); else the number the answer opens with as a sentence of its own ("80
km/h. 2 hours 15 minutes is 2.25 hours…" 80); else the result stated last, after "=", "is",
"equals", "makes", "gives" or "result"/"total"/"solution"/"sum" ("3 × 4 = 12, plus 5 is 17"
17); else the last number in the answer. Figures in brackets (a check, an aside) count only
when no other does. Read as a person would: "1,234.5" 1234.5, "-3e2" -300, "−7" -7, "$1,000"
1000, "42%" 42 (the percent sign is dropped: write the expected value in the same unit),
"x = 3/4" 0.75 (a fraction is its value), "The result is 7." 7; letters after a number are
units ("5kg" 5), letters before it make it a name ("x3", "H2O" are not numbers)."""

import re

# At most 3 wrapping marks ("**(", ")**"): unbounded ones make a search over a long run of
# brackets quadratic. Whitespace runs are never two optional pieces side by side, for the same
# reason (every pattern here runs on answers of any size in linear time).
_OPEN = r"[(\[*_\"'`]{0,3}"
_CLOSE = r"[)\]*_\"'`]{0,3}"
# A letter option: upper case, or lower case only when nothing word-like follows.
# "I" before a lower-case word is the pronoun ("the answer is I think C").
_LETTER = (
    r"(?:(?:([A-HJ-Z])|(I)(?!\s+[a-z]))(?![A-Za-z0-9'’])"
    r"|([a-z])(?=\s*(?:$|[.,;:!?)\]*_\"'`])))"
)
_CONNECT = r"(?:\s+(?:is|would\s+be|will\s+be|should\s+be|must\s+be)(?:\s*:)?|\s*[:=\-–—])"
_EXPLICIT = re.compile(
    r"(?i:\b(?:(?:final|correct|right|best)\s+)?(?:answer|option|choice)"
    + _CONNECT
    + r"|\bI\s+(?:would\s+|'d\s+)?(?:choose|pick|select|go\s+with))"
    + r"\s*(?:(?i:option|choice)\s+)?"
    + _OPEN
    + _LETTER
    + _CLOSE
)
_ALONE = re.compile(r"^\W*([A-Za-z])\W*$")
# Lower case only before ")": "e.g." and "i.e." start sentences, not options.
_LEADING = re.compile(r"^\s*" + _OPEN + r"(?:([A-Z])(?:\)|\]|\*\*|\.|:|\s+[-–—])|([a-z])\))")
_IS_CORRECT = re.compile(
    _OPEN + r"\b([A-Z])\b" + _CLOSE + r"\s+(?i:is\s+(?:the\s+)?(?:correct|right|best))"
)
_ITS = re.compile(r"(?i:\bit(?:'s|’s|\s+is|\s+must\s+be))\s+" + _OPEN + r"([A-Z])\b(?!['’])")
_OPTION = re.compile(r"(?i:\b(?:option|choice))\s+" + _OPEN + r"([A-Z])\b(?!['’])")
_MARKED = re.compile(r"\*\*\(?([A-Z])\)?\*\*|\(([A-Z])\)")
# "A"/"I" before a lower-case word other than and/or is the word ("A cat"), not an option.
_STANDALONE = re.compile(r"(?<![\w'’])(?:([B-HJ-Z])|([AI])(?!\s+(?!(?:and|or)\b)[a-z]))(?![\w'’])")


def _letters(pattern, text):
    return [next(g for g in m.groups() if g).upper() for m in pattern.finditer(text)]


def pick_choice(answer):
    """The option letter the answer picks (upper case), or None."""
    found = _letters(_EXPLICIT, answer)
    if found:
        return found[-1]
    for pattern in (_ALONE, _LEADING):
        found = _letters(pattern, answer[:200])  # both read the answer's start only
        if found:
            return found[0]
    for pattern in (_IS_CORRECT, _ITS):
        found = _letters(pattern, answer)
        if found:
            return found[-1]
    for pattern in (_OPTION, _MARKED, _STANDALONE):
        found = set(_letters(pattern, answer))
        if found:
            return found.pop() if len(found) == 1 else None
    return None


_NUMBER = (
    r"(?<![\w.])([-+−]?)[$€£¥]?"
    r"((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)([eE][-+]?\d+)?"
    r"(?:\s*/\s*(\d+)(?![\d.]))?"
)
_ANY = re.compile(_NUMBER)
_BOXED = re.compile(r"\\boxed\{\s*" + _NUMBER)
_APPROX = r"(?:\s*(?:approximately|about|around|roughly|~|≈))?"
_ANSWER = re.compile(
    r"(?i:\banswer\b(?:\s*(?:is|=|:|equals))?(?:\s*:)?" + _APPROX + r")(?:\s*\*\*)?\s*" + _NUMBER
)
# A bold span (at most 80 characters); its number is the last one in it ("**4! × 2 = 48**").
_BOLD = re.compile(r"\*\*([^*\n]{1,80})\*\*")
# A bold heading or list marker is no result: "**Step 1:**", "**2.**", "**Part 3**".
_BOLD_LABEL = re.compile(r"(?i:^\s*(?:step|part|case|question|method|option)\b)|[:.)]\s*$")
# The answer opens with its number as a sentence of its own: "80 km/h. 2 hours 15 minutes is…",
# "408 (17 × 24 = …)", "5 lamps are left.", "1584.\n…" (up to 4 words of units after it).
_OPENS_WITH = re.compile(
    r"\A\s*"
    + _NUMBER
    # Words apart by spaces only ("5kg" one word): no long run of letters splits two ways.
    + r"(?:[ \t]*[A-Za-z%°/][A-Za-z%°/'’-]*(?:[ \t]+[A-Za-z%°/][A-Za-z%°/'’-]*){0,3})?[ \t]*"
    + r"(?:[.!;](?:\s|\Z)|\Z|\n|\(|,\s+(?i:because|since|as|from|which)\b)"
)
_BRACKETED = re.compile(r"\([^()\n]{0,200}\)")
_NUMBERED_LIST = re.compile(r"^\s*2[.)]\s", re.MULTILINE)
# A result stated: after "result"/"total"/"solution"/"sum" (is, =, :) or after "=", "is",
# "equals", "makes", "gives"; the one stated last is the result the working arrived at
# ("3 × 4 = 12, plus 5 is 17" 17; "total 432. So 1200 + 816 − 432 = 1584" 1584).
_STATED = re.compile(
    r"(?i:(?:\b(?:result|total|solution|sum)\b(?:\s*(?:is|=|:|equals))?(?:\s*:)?"
    r"|=|\b(?:is|equals|makes|gives)\b)" + _APPROX + r")(?:\s*\*\*)?\s*" + _NUMBER
)


def _value(match, first_group=1):
    sign, digits, exponent, denominator = match.group(*range(first_group, first_group + 4))
    number = float(digits.replace(",", "") + (exponent or ""))
    if denominator and float(denominator) and not exponent:
        number /= float(denominator)  # float: a denominator of any length reads
    return -number if sign in ("-", "−") else number


def _last(pattern, text):
    last = None
    for last in pattern.finditer(text):  # noqa: B007 - the last match is the pick
        pass
    return last


def _bold(answer):
    """The number of the last bold span that holds one and is no heading or list marker."""
    for span in reversed(_BOLD.findall(answer)):
        if _BOLD_LABEL.search(span):
            continue
        last = _last(_ANY, span)
        if last is not None:
            return _value(last)
    return None


def _leading(answer):
    """The number the answer opens with as a sentence of its own (not a list's "1.")."""
    found = _OPENS_WITH.match(answer)
    if found is None:
        return None
    if float(found.group(2).replace(",", "") or 0) == 1 and _NUMBERED_LIST.search(answer):
        return None
    return _value(found)


def pick_number(answer):
    """The number the answer gives as its result (a float), or None."""
    for pattern in (_BOXED, _ANSWER):
        last = _last(pattern, answer)
        if last is not None:
            return _value(last)
    for pick in (_bold, _leading):
        found = pick(answer)
        if found is not None:
            return found
    # A check or an aside in brackets comes after the result: "408 (check: 408 / 24 = 17)".
    outside = _BRACKETED.sub(" ", answer)
    for pattern, text in ((_STATED, outside), (_ANY, outside), (_STATED, answer), (_ANY, answer)):
        last = _last(pattern, text)
        if last is not None:
            return _value(last)
    return None
