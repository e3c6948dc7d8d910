"""The web layer's extension objects, bound to the app in web.init_app (one of each)."""

from flask_htmx import HTMX
from flask_wtf.csrf import CSRFProtect

htmx = HTMX()
csrf = CSRFProtect()
