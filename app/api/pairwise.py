"""JSON API: A/B pairs and votes, a judge's pairwise votes, and the leaderboard."""

from flask import Blueprint
from flask import jsonify
from flask import url_for

from ..ratings import labels
from ..ratings.judge_votes import ask_judge
from ..ratings.judge_votes import get_job
from ..ratings.judge_votes import job_status
from ..ratings.kept import kept_leaderboard
from ..ratings.leaderboard import parse_runs
from ..ratings.leaderboard import parse_source
from ..ratings.votes import change_vote
from ..ratings.votes import next_pair
from ..ratings.votes import record_vote
from ..ratings.votes import scope
from ..ratings.votes import undo_last_vote
from ..ratings.votes import vote_history
from ..ratings.votes import vote_to_dict
from .ratings import import_text
from .ratings import me
from .ratings import query_args
from .replies import attachment
from .replies import created
from .replies import json_body

bp = Blueprint("pairwise", __name__)


def _side(item):
    return {"itemId": item.id, "answer": item.answer}


@bp.get("/pairwise/next")
def pairwise_next():
    """My next unvoted pair of two targets (in my own shuffled order), sides randomised, no
    model names, with the pairToken a vote on it carries; 204 when done."""
    args = query_args("runA", "targetA", "runB", "targetB")
    pair = next_pair(
        scope(args.get("runA"), args.get("targetA"), args.get("runB"), args.get("targetB")),
        me(),
    )
    if pair is None:
        return "", 204
    return jsonify(
        {
            "taskId": pair.task_key,
            "pairToken": pair.token,
            "question": pair.question,
            "left": _side(pair.left),
            "right": _side(pair.right),
        }
    )


@bp.post("/pairwise/votes")
def pairwise_vote():
    """My vote {"pairToken", "winner": LEFT|RIGHT|TIE} on a pair handed to me: 201. The same
    token again (a key pressed twice) answers 200 with the first vote, storing nothing; a token
    not handed to me is a 400 naming pairToken."""
    vote = record_vote(json_body(), me())
    if vote.repeated:
        return jsonify(vote_to_dict(vote))
    return created(vote_to_dict(vote), url_for("api.pairwise.pairwise_votes_export"))


@bp.post("/pairwise/votes/undo")
def pairwise_vote_undo():
    """Undo my last vote: 200 with the vote removed (its pair comes back to my queue)."""
    return jsonify(undo_last_vote(me()))


@bp.patch("/pairwise/votes/<int:vote_id>")
def pairwise_vote_change(vote_id):
    """Change one of my votes: {"winner": LEFT|RIGHT|TIE}; the old winner goes to history."""
    return jsonify(vote_to_dict(change_vote(vote_id, json_body(), me())))


@bp.get("/pairwise/votes/history")
def pairwise_vote_history():
    """My vote changes and undos, newest first (who, when, the old winner)."""
    query_args()
    return jsonify(vote_history(me()))


@bp.get("/pairwise/votes")
def pairwise_votes_export():
    """Votes: ?runs=<id,id>&source=human|judge&format=json|csv|jsonl."""
    args = query_args("runs", "source", "format")
    fmt = labels.parse_format(args.get("format"))
    runs = parse_runs(args.get("runs")) if args.get("runs") else None
    source = parse_source(args.get("source"))
    rows = labels.vote_rows(runs, None if source == "all" else source)
    return attachment(
        labels.export_chunks(rows, labels.VOTE_COLUMNS, fmt),
        f"votes.{fmt}",
        labels.CONTENT_TYPES[fmt],
    )


@bp.post("/pairwise/votes/import")
def pairwise_votes_import():
    """Import votes (CSV, JSONL or JSON) matched by run id, task id and target; all or nothing."""
    text, fmt = import_text()
    return jsonify(labels.import_votes(text, fmt, person=me())), 201


@bp.post("/pairwise/judge")
def pairwise_judge():
    """Have a judge vote on the scope's pairs, each in both orders: 202 with the job's progress
    (Location to poll); 200 with jobId null when this judge already voted on every pair."""
    job = ask_judge(json_body())
    if job is None:
        return jsonify(
            {"jobId": None, "calls": 0, "message": "every pair already has this judge's vote"}
        )
    response = jsonify(job_status(job))
    response.headers["Location"] = url_for("api.pairwise.pairwise_judge_get", job_id=job.id)
    return response, 202


@bp.get("/pairwise/judge/<int:job_id>")
def pairwise_judge_get(job_id):
    """A judging job's progress (like a run's) and the judge's position consistency."""
    return jsonify(job_status(get_job(job_id)))


@bp.get("/leaderboard")
def leaderboard_get():
    """Bradley–Terry ratings with 95 % intervals: ?runs=<id,id>&source=human|judge|all."""
    args = query_args("runs", "source")
    board = kept_leaderboard(parse_runs(args.get("runs")), parse_source(args.get("source")))
    return jsonify(board["rows"])


@bp.get("/leaderboard/details")
def leaderboard_details():
    """The leaderboard with its win-rate matrix, vote count, method and judge consistency."""
    args = query_args("runs", "source")
    runs, source = parse_runs(args.get("runs")), parse_source(args.get("source"))
    return jsonify(kept_leaderboard(runs, source))
