"""Compare A/B: two targets' answers to one task side by side, blind, voted by keyboard.

Q = A (left), W = B (right), E = tie (LLM Runner's hotkeys). The vote posts the pair token
handed out with the pair; the answer is the next pair (#pair) with the last vote's targets
revealed, and buttons to change that vote or undo it (U). A key pressed twice posts the same
token twice: the second answers with the first vote, so no vote lands on a pair never seen. A
judge model can be asked to vote on the same pairs (in both orders, through the engine); its
job's progress (#judge-job) polls while the job runs.
"""

from flask import Blueprint
from flask import flash
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for

from ..catalog.providers import list_providers
from ..db.target_name import target_name
from ..errors import Conflict
from ..errors import NotFound
from ..errors import ValidationError
from ..ids import digits_number
from ..ratings import votes
from ..ratings.judge_votes import ask_judge
from ..ratings.judge_votes import get_job
from ..ratings.judge_votes import job_status
from ..ratings.judge_votes import latest_job
from ..results.compare import run_choices
from ..runs.queries import get_run
from .extensions import htmx
from .people import me

bp = Blueprint("ab", __name__)
# The pickers name each target as every page does (app.db.target_name).
bp.add_app_template_global(target_name)

SCOPE_KEYS = ("runA", "targetA", "runB", "targetB")


def _scope(source):
    """The A/B scope from a query string or form, or None while it is not complete."""
    if not all(source.get(k) for k in ("runA", "targetA", "targetB")):
        return None
    return votes.scope(*(source.get(k) for k in SCOPE_KEYS))


def _pair_context(scope, pairs, last=None, error=None, notice=None):
    """My next pair; `pairs` (how many there are) is counted once by the page and carried."""
    person = me()
    return {
        "scope": scope,
        "pair": votes.next_pair(scope, person),
        "progress": {"pairs": pairs, "voted": votes.voted_count(scope, person)},
        "last": votes.vote_to_dict(last) if last is not None else None,
        "error": error,
        "notice": notice,
        "mine": votes.my_votes(scope, person),
    }


def _pair_reply(scope, last=None, error=None, notice=None):
    """#pair through htmx, else back to the page (the last vote in the URL, messages flashed)."""
    if htmx:
        context = _pair_context(scope, _pairs(request.form, scope), last, error, notice)
        return render_template("ab/_pair.html", **context)
    if error:
        flash(error, "error")
    if notice:
        flash(notice, "info")
    query = scope.query()
    if last is not None:
        query["last"] = last.id
    return redirect(url_for("ab.index", **query))


def _pairs(source, scope):
    """The pair count the page carries in its vote form (counted again when it is missing)."""
    value = source.get("pairs", "")
    number = digits_number(value)
    return number if number is not None else votes.pair_count(scope)


def _judge_context(scope):
    job = latest_job(scope) if scope else None
    return {"scope": scope, "job": job_status(job) if job else None}


@bp.get("/ab")
def index():
    """The A/B page: pick two targets, then vote pair after pair."""
    args = request.args
    scope = _scope(args)
    run_a = get_run(args["runA"]) if args.get("runA") else None
    run_b = get_run(args["runB"]) if args.get("runB") else run_a
    context = {
        "runs": run_choices(),
        "picked": {k: args.get(k, "") for k in SCOPE_KEYS},
        "targets_a": votes.target_choices(run_a) if run_a else [],
        "targets_b": votes.target_choices(run_b) if run_b else [],
        "shared": votes.shared_tasks(run_a, run_b) if run_a and run_b and run_a != run_b else None,
        "providers": list_providers(),
        "scope": scope,
    }
    if scope:
        last_id = digits_number(args.get("last", ""))
        last = votes.get_vote(last_id) if last_id is not None else None
        if last is not None and last.voter != me():
            last = None  # someone else's vote is not revealed here
        context.update(_pair_context(scope, votes.pair_count(scope), last))
        context.update(_judge_context(scope))
    return render_template("ab/index.html", **context)


@bp.post("/ab/votes")
def vote():
    """My vote on the pair shown (its pair token); then the next pair. The same token again
    (a double key press) shows the next pair and the first vote, storing nothing."""
    scope = votes.scope(*(request.form.get(k) for k in SCOPE_KEYS))
    body = {k: request.form.get(k) for k in ("pairToken", "leftItemId", "rightItemId", "winner")}
    last, error = None, None
    try:
        last = votes.record_vote(body, me())
    except Conflict as exc:
        error = exc.message
    except ValidationError as exc:
        error = exc.message
    return _pair_reply(scope, last, error)


@bp.post("/ab/votes/undo")
def undo():
    """Undo my last vote: its pair comes back as the next one."""
    scope = votes.scope(*(request.form.get(k) for k in SCOPE_KEYS))
    try:
        removed = votes.undo_last_vote(me())
    except NotFound as exc:
        return _pair_reply(scope, error=exc.message)
    return _pair_reply(scope, notice=f"Your vote on {removed['taskId']} was undone.")


@bp.post("/ab/votes/<int:vote_id>")
def change(vote_id):
    """Change one of my votes (the revealed last one, or any in "my votes"): A, B or a tie."""
    scope = votes.scope(*(request.form.get(k) for k in SCOPE_KEYS))
    try:
        vote = votes.change_vote(vote_id, {"winner": request.form.get("winner")}, me())
    except (NotFound, ValidationError) as exc:
        return _pair_reply(scope, error=exc.message)
    return _pair_reply(scope, vote, notice="Your vote was changed.")


@bp.post("/ab/judge")
def judge():
    """Ask a judge model to vote on the scope's pairs (both orders, through the engine)."""
    form = request.form
    scope = votes.scope(*(form.get(k) for k in SCOPE_KEYS))
    body = {**scope.query(), "judgeProviderId": form.get("judgeProviderId")}
    body["judgeModel"] = form.get("judgeModel")
    try:
        job = ask_judge(body)
    except (ValidationError, Conflict) as exc:
        flash(exc.message, "error")
    else:
        if job is None:
            flash("This judge has voted on every pair already.", "info")
        else:
            flash(f"The judge is comparing the pairs (job {job.id}).", "success")
    return redirect(url_for("ab.index", **scope.query()) + "#judge-votes")


@bp.get("/ab/judge/<int:job_id>")
def judge_job(job_id):
    """Fragment #judge-job: a judging job's progress (polls while it runs)."""
    job = get_job(job_id)
    return render_template("ab/_judge_job.html", job=job_status(job))
