"""Accounts (admins): the list, adding one with a role and a password, changing a role,
removing one. Every change is a plain form post (CSRF), recorded in the audit log by the
after-request map (audit_trail.py) under the account's name, never with the password."""

from flask import Blueprint
from flask import flash
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for

from ..accounts.passwords import NO_PASSWORD
from ..accounts.store import add_account
from ..accounts.store import get_account
from ..accounts.store import list_accounts
from ..accounts.store import remove_account
from ..accounts.store import set_role
from ..db.models import ROLES
from ..errors import Conflict
from ..errors import ValidationError
from .settings import form_errors

bp = Blueprint("accounts", __name__)


def _page(errors=None, form=None, status=200, shown=None, row_error=None):
    rows = [
        {
            "name": a.name,
            "role": a.role,
            "password": a.password_hash != NO_PASSWORD,
            "created": a.created_at,
        }
        for a in list_accounts()
    ]
    page = render_template(
        "accounts/index.html",
        accounts=rows,
        roles=ROLES,
        errors=errors or {},
        form=form or {},
        shown=shown,
        row_error=row_error,
    )
    return page, status


@bp.get("/accounts")
def index():
    """Every account with its role; the forms to add, change and remove them."""
    return _page()


@bp.get("/accounts/<name>")
def show(name):
    """The list with one account picked out (where adding one lands)."""
    get_account(name)  # an unknown name is a 404
    return _page(shown=name)


@bp.post("/accounts")
def create():
    """Add an account: name, role, the password twice."""
    form = request.form
    try:
        if form.get("password", "") != form.get("passwordAgain", ""):
            raise ValidationError.field("passwordAgain", "the two passwords differ")
        name = (form.get("name") or "").strip()
        account = add_account(name, form.get("role"), form.get("password") or "")
    except (ValidationError, Conflict) as exc:
        errors, status = form_errors(exc)
        # The passwords are never sent back into the page.
        return _page(errors, {"name": form.get("name", ""), "role": form.get("role")}, status)
    flash(f"Account {account.name} ({account.role}) added.", "success")
    return redirect(url_for("accounts.show", name=account.name))


@bp.post("/accounts/<name>/role")
def change_role(name):
    """Give an account another role (the last admin stays an admin)."""
    try:
        old = set_role(name, request.form.get("role"))
    except (ValidationError, Conflict) as exc:
        return _page(status=exc.status, row_error=(name, exc.message))
    flash(f"{name} is now {request.form.get('role')} (was {old}).", "success")
    return redirect(url_for("accounts.index"))


@bp.post("/accounts/<name>/remove")
def remove(name):
    """Remove an account; its sessions end with it (the last admin stays)."""
    try:
        remove_account(name)
    except Conflict as exc:
        return _page(status=exc.status, row_error=(name, exc.message))
    flash(f"Account {name} removed.", "success")
    return redirect(url_for("accounts.index"))
