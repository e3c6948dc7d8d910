"""Roles, least to most: viewer reads; rater also rates and votes; runner also starts, pauses
and stops runs and edits tasks, collections, templates, schedules and datasets; admin also
providers and their secrets, prices, accounts, tokens, settings and deletions."""

from ..db.models import ROLES
from ..errors import ValidationError

VIEWER, RATER, RUNNER, ADMIN = ROLES


def rank(role):
    """The role's place in ROLES (viewer 0 .. admin 3)."""
    return ROLES.index(role)


def allows(role, needed):
    """Whether `role` may do what needs `needed` (a higher role can do all a lower one can)."""
    return rank(role) >= rank(needed)


def check_role(role, field="role"):
    """The role, checked: one of ROLES, else a ValidationError naming the field."""
    if role not in ROLES:
        raise ValidationError.field(field, f"{role!r} is not a role; use one of {', '.join(ROLES)}")
    return role
