"""The judge check of a big run reads its few ratings and votes, not every item of the run:
human agreement starts from the ratings' run column, the agreement between people from the
run's targets (SQLite's plan, with no table statistics, as a fresh database has)."""

from app.db.connection import database
from app.db.models import Rating
from app.db.models import Vote
from app.ratings.between_people import _in_runs
from app.ratings.judge_check import _rated_scores
from tests.factories import make_run


def plan(query):
    sql, params = query.sql()
    return [row[-1] for row in database.execute_sql(f"EXPLAIN QUERY PLAN {sql}", params)]


def test_human_agreement_starts_from_the_runs_ratings(app):
    run, _targets = make_run("rated")
    steps = plan(_rated_scores(Rating.run == run.id))
    assert "USING INDEX rating_run_id" in steps[0]
    assert not any("item_run_id" in step for step in steps)


def test_votes_of_a_run_are_found_by_its_targets(app):
    run, _targets = make_run("voted")
    steps = plan(Vote.select(Vote.id).where(_in_runs([run.id])))
    assert any("vote_left_target_id" in step for step in steps)
    assert not any(" item " in f" {step} " for step in steps)
