"""Web pages: collections. (placeholder until its owner fills it in)"""

from flask import Blueprint

bp = Blueprint("collections", __name__, url_prefix="/settings/collections" or None)
