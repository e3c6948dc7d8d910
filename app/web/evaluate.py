"""Evaluate: rate answers one card at a time (Likert 1-5, tags, notes), by keyboard.

The page and its filters live in the URL; the card (#card) has its own fragment URL, and the
card's form posts to the item (save, then stay, next or previous). With JavaScript the keys
1-5, T, N, J and K drive the same form through htmx, so the next card comes without a reload;
without it the buttons do the same with a redirect.
"""

from urllib.parse import urlencode

from flask import Blueprint
from flask import Response
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for

from ..errors import ValidationError
from ..ratings import cards
from ..ratings.kept import kept_choices
from ..ratings.kept import kept_progress
from ..ratings.store import tags_used
from .extensions import htmx
from .people import me

bp = Blueprint("evaluate", __name__)

THEN = ("stay", "next", "prev")
FILTER_PREFIX = "f_"  # the card form's copy of the filters (its own fields: rating, tags, notes)


def _query(filters, item_id=None):
    """The filters (and the card) as query parameters, flags as 1."""
    params = {k: (1 if v is True else v) for k, v in filters.items() if v not in (None, "", False)}
    if item_id is not None:
        params["item"] = item_id
    return params


def _links(filters):
    return {
        "page": lambda item_id=None: url_for("evaluate.index", **_query(filters, item_id)),
        "card": lambda item_id=None: url_for("evaluate.card", **_query(filters, item_id)),
        "filters": urlencode(_query(filters)),
    }


def _filters(source, prefix=""):
    """The queue's filters, for this request's person."""
    filters = cards.parse_filters(source, prefix)
    filters.person = me()
    return filters


def _card_context(filters, item_id=None, error=None):
    card = cards.card(filters, item_id)
    return {
        "card": card,
        "filters": filters,
        "blind": bool(filters.get("blind")),
        "links": _links(filters),
        "progress": kept_progress(filters) if card else None,
        "error": error,
    }


def _card_response(context, status=200):
    response = Response(render_template("evaluate/_card.html", **context), status=status)
    card = context["card"]
    if htmx:
        # The fragment has its own URL; the address bar shows the bookmarkable page.
        response.headers["HX-Push-Url"] = context["links"]["page"](card.item.id if card else None)
    return response


@bp.get("/evaluate")
def index():
    """The Evaluate page: filters, then one card (the queue's first, or ?item=)."""
    filters = _filters(request.args)
    context = _card_context(filters, request.args.get("item"))
    context.update(
        {
            "choices": kept_choices(filters),
            "tags": tags_used(),
            "rating_filters": cards.RATING_FILTERS,
        }
    )
    return render_template("evaluate/index.html", **context)


@bp.get("/evaluate/card")
def card():
    """Fragment #card: one card (J/K through htmx)."""
    filters = _filters(request.args)
    return _card_response(_card_context(filters, request.args.get("item")))


@bp.get("/evaluate/tags")
def tag_options():
    """Fragment #tag-options: the tag suggestions, refreshed as tags are added."""
    return render_template("evaluate/_tag_options.html", tags=tags_used())


def _tags_changed(response):
    """Tell the page its tag suggestions may have grown (htmx refreshes #tag-options)."""
    if htmx and (request.form.get("tags") or "").strip():
        response.headers["HX-Trigger"] = "tagsChanged"
    return response


@bp.post("/evaluate/items/<int:item_id>")
def save(item_id):
    """Save the card's rating, tags and notes, then show this card, the next or the previous.

    An autosave (notes typed, a tag added) answers with the save status alone.
    """
    filters = _filters(request.form, prefix=FILTER_PREFIX)
    then = request.form.get("then", "stay")
    then = then if then in THEN else "stay"
    try:
        target = cards.save_and_move(item_id, request.form, filters, then)
    except ValidationError as exc:
        if request.form.get("autosave"):
            return render_template("evaluate/_save_status.html", error=exc.message)
        context = _card_context(filters, item_id, error=exc.message)
        if htmx:
            return _card_response(context)  # htmx swaps only 2xx answers
        return _card_response(context, 400)
    if request.form.get("autosave"):
        return _tags_changed(Response(render_template("evaluate/_save_status.html", error=None)))
    if target is None:  # past the end (or the start) of the queue: stay, and say so
        target = item_id
        end = (
            "That was the last card for these filters."
            if then == "next"
            else "This is the first card."
        )
    else:
        end = None
    if htmx:
        context = _card_context(filters, target)
        context["end"] = end
        return _tags_changed(_card_response(context))
    return redirect(url_for("evaluate.index", **_query(filters, target)))
