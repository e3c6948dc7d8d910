"""Pattern page (debug/testing only): every partial with sample data. (placeholder)"""

from flask import Blueprint

bp = Blueprint("patterns", __name__, url_prefix="/_patterns")
