"""Who is labelling: the signed-in account's rater/voter name for this request.

The accounts feature sets `flask.g.account` (None, or absent, when nobody needs to sign in:
then every label is "human", as before accounts existed).
"""

from flask import g

from ..ratings.people import person_of


def me():
    """This request's person: "human", or "human:<account name>"."""
    return person_of(g.get("account"))
