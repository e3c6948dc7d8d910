"""Web pages: providers. (placeholder until its owner fills it in)"""

from flask import Blueprint

bp = Blueprint("providers", __name__, url_prefix="/settings/providers" or None)
