"""Web pages: results. (placeholder until its owner fills it in)"""

from flask import Blueprint

bp = Blueprint("results", __name__, url_prefix="" or None)
