"""Row ids and whole numbers from requests: one rule for what SQLite can store and look up."""

from .errors import ValidationError

SQLITE_INT_MAX = 2**63 - 1


def whole_number(value, field, low=None, high=SQLITE_INT_MAX):
    """An int from a query parameter or id (no bools, no floats with a fraction, no overflow)."""
    try:
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError
        number = int(str(value).strip()) if isinstance(value, str) else int(value)
    except (TypeError, ValueError, OverflowError):
        raise ValidationError.field(field, "must be a whole number") from None
    if (low is not None and number < low) or number > high:
        bounds = f"from {low} to {high}" if low is not None else f"at most {high}"
        raise ValidationError.field(field, f"must be a whole number {bounds}")
    return number


def digits_number(text):
    """The number `text` writes in ASCII digits, when SQLite can hold it; else None.

    str.isdigit() alone lets through "²" (which int() refuses) and 5 000 digits (past Python's
    int-string limit, and SQLite's integers).
    """
    text = str(text).strip()
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(SQLITE_INT_MAX)):
        return None
    number = int(text)
    return number if number <= SQLITE_INT_MAX else None


def is_db_id(value):
    """True when `value` can be a row id (SQLite integers stop at 2**63 - 1)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= SQLITE_INT_MAX
