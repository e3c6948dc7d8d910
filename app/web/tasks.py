"""Web pages: tasks. (placeholder until its owner fills it in)"""

from flask import Blueprint

bp = Blueprint("tasks", __name__, url_prefix="/settings/tasks" or None)
