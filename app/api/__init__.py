"""The JSON API under /api (seed 000 §3, §7 shapes). Routes parse, call a domain function, reply."""

from flask import Blueprint

bp = Blueprint("api", __name__, url_prefix="/api")

from . import datasets  # noqa: E402,F401
from . import exports  # noqa: E402,F401
from . import providers  # noqa: E402,F401
from . import runs  # noqa: E402,F401
from . import status  # noqa: E402,F401
from . import tasks  # noqa: E402,F401
