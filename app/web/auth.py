"""Signing in and out: the login page (CSRF-checked, attempts throttled per account and
address) and logout, which ends the account's sessions."""

import math

from flask import Blueprint
from flask import current_app
from flask import g
from flask import redirect
from flask import render_template
from flask import request
from flask import session
from flask import url_for

from ..accounts import throttle
from ..accounts.access import login_needed
from ..accounts.store import authenticate
from ..accounts.store import end_sessions
from .back import local_path

bp = Blueprint("auth", __name__)
THROTTLE = "llmbench.login_throttle"


def login_throttle():
    """The app's one LoginThrottle (tests swap its clock)."""
    return current_app.extensions[THROTTLE]


def _wait_text(seconds):
    minutes = math.ceil(seconds / 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


@bp.get("/login")
def login():
    """The sign-in form; with no login needed, the dashboard."""
    if not login_needed(current_app.config):
        return redirect(url_for("dashboard.index"))
    return render_template("auth/login.html", next=local_path(request.args.get("next")))


@bp.post("/login")
def login_post():
    """Check the name and password; too many failures answer 429 with when to retry."""
    if not login_needed(current_app.config):
        return redirect(url_for("dashboard.index"), code=303)  # nothing to sign in to
    name = (request.form.get("name") or "").strip()
    password = request.form.get("password") or ""
    next_path = local_path(request.form.get("next"))
    keys = throttle.keys(name, request.remote_addr)
    limiter = login_throttle()
    wait = limiter.retry_after(keys)
    if wait > 0:
        message = f"Too many failed sign-ins; try again in {_wait_text(wait)}."
        page = render_template("auth/login.html", next=next_path, name=name, error=message)
        return page, 429, {"Retry-After": str(math.ceil(wait))}
    account = authenticate(name, password)
    if account is None:
        limiter.failed(keys)
        message = "That name and password do not match an account."
        return render_template("auth/login.html", next=next_path, name=name, error=message), 401
    limiter.succeeded(keys[0])
    session.clear()  # a new session for the new person, nothing carried over
    session["account"] = account.name
    session["account_version"] = account.session_version
    return redirect(next_path or url_for("dashboard.index"), code=303)


@bp.post("/logout")
def logout():
    """End the account's sessions (this one and any other), then show the sign-in form."""
    account = g.get("account")
    if account is not None and account.kind == "account":
        end_sessions(account.name)
    session.clear()
    return redirect(url_for("auth.login"), code=303)


def init_app(app):
    app.extensions[THROTTLE] = throttle.LoginThrottle()
