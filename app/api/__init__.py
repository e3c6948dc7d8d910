"""The JSON API under /api (the service's shapes). Routes parse, call a domain function, reply."""

from urllib.parse import urlsplit

from flask import Blueprint
from flask import jsonify
from flask import request

from . import audit
from . import datasets
from . import exports
from . import pairwise
from . import providers
from . import queue
from . import ratings
from . import runs
from . import status
from . import system
from . import tasks
from . import templates
from . import trends
from .replies import check_json

bp = Blueprint("api", __name__, url_prefix="/api")


def _netloc(url):
    """The host:port of `url`; None when it cannot be read (a broken [IPv6] host)."""
    try:
        return urlsplit(url).netloc
    except ValueError:
        return None


@bp.before_request
def _same_origin_only():
    """Refuse state-changing calls sent by a browser from another site.

    The API carries no CSRF token (CLI and CI clients call it), so a page on another site must
    not be able to make the person's browser pause, stop or delete runs. Browsers mark such
    requests with Sec-Fetch-Site / Origin; curl and scripts send neither and pass.
    """
    if request.method in ("GET", "HEAD", "OPTIONS"):
        return None
    site = request.headers.get("Sec-Fetch-Site")
    origin = request.headers.get("Origin")
    cross = site in ("cross-site", "same-site")
    if origin and origin != "null" and _netloc(origin) != request.host:
        cross = True
    if cross or origin == "null":
        return jsonify(
            {
                "error": "cross-site requests to the API are refused; "
                "use the web pages or call the API directly"
            }
        ), 403
    return None


@bp.before_request
def _sound_json():
    """A JSON body no route can use (too deep, lone surrogates) is a 400 before any route."""
    check_json()


AREAS = (
    audit,
    datasets,
    exports,
    pairwise,
    providers,
    queue,
    ratings,
    runs,
    status,
    system,
    tasks,
    templates,
    trends,
)
for area in AREAS:
    bp.register_blueprint(area.bp)
