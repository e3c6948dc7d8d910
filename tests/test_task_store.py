"""Tasks and collections: validation of every field, uniqueness, search, membership."""

import pytest

from app.catalog.collections import add_tasks_to_collection
from app.catalog.collections import collection_tasks
from app.catalog.collections import collection_to_dict
from app.catalog.collections import create_collection
from app.catalog.collections import delete_collection
from app.catalog.collections import get_collection
from app.catalog.collections import list_collections
from app.catalog.collections import remove_task_from_collection
from app.catalog.collections import update_collection
from app.catalog.task_fields import clean_task
from app.catalog.tasks import create_task
from app.catalog.tasks import delete_task
from app.catalog.tasks import get_task
from app.catalog.tasks import list_categories
from app.catalog.tasks import search_tasks
from app.catalog.tasks import update_task
from app.db.models import CollectionTask
from app.db.models import Task
from app.errors import Conflict
from app.errors import NotFound
from app.errors import ValidationError


def task_data(**overrides):
    data = {
        "task_id": "geo_001",
        "category": "Geography",
        "subcategory": "Capitals",
        "difficulty": "easy",
        "question": "What is the capital of France?",
        "excellent": "Paris.",
        "good": "Paris",
        "pass_answer": "It is Paris",
        "incorrect_direction": "names another city",
    }
    data.update(overrides)
    return data


def fields_of(exc):
    return [e["field"] for e in exc.value.errors]


def test_clean_task_returns_every_model_field():
    values = clean_task(task_data(tags=["geo"], auto_fail=["mentions Lyon"]))
    assert values["task_id"] == "geo_001" and values["tags"] == ["geo"]
    assert values["auto_fail"] == ["mentions Lyon"] and values["rubric"] is None
    assert values["system_prompt"] is None and values["template_version"] is None


def test_difficulty_defaults_to_medium_and_is_case_insensitive():
    assert clean_task(task_data(difficulty=""))["difficulty"] == "medium"
    assert clean_task(task_data(difficulty="HARD"))["difficulty"] == "hard"


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"task_id": ""}, "task_id"),
        ({"task_id": "has space"}, "task_id"),
        ({"task_id": "x" * 201}, "task_id"),
        ({"task_id": ["list"]}, "task_id"),
        ({"category": ""}, "category"),
        ({"category": "c" * 101}, "category"),
        ({"difficulty": "impossible"}, "difficulty"),
        ({"question": "  "}, "question"),
        ({"excellent": "", "good": "", "pass_answer": ""}, "excellent"),
        ({"rubric": {"id": "r1"}}, "rubric"),
        ({"rubric": ["r1"]}, "rubric[0]"),
        ({"rubric": [{"id": "", "text": "t", "weight": 1, "max_score": 1}]}, "rubric[0].id"),
        ({"rubric": [{"id": "r1", "text": "", "weight": 1, "max_score": 1}]}, "rubric[0].text"),
        ({"rubric": [{"id": "r1", "text": "t", "weight": 0, "max_score": 1}]}, "rubric[0].weight"),
        (
            {"rubric": [{"id": "r1", "text": "t", "weight": "x", "max_score": 1}]},
            "rubric[0].weight",
        ),
        (
            {"rubric": [{"id": "r1", "text": "t", "weight": 1, "max_score": -5}]},
            "rubric[0].max_score",
        ),
        (
            {
                "rubric": [
                    {"id": "r1", "text": "a", "weight": 1, "max_score": 1},
                    {"id": "r1", "text": "b", "weight": 1, "max_score": 1},
                ]
            },
            "rubric[1].id",
        ),
        ({"auto_fail": [1, 2]}, "auto_fail"),
        ({"tags": {"a": 1}}, "tags"),
        ({"vars": ["city"]}, "vars"),
        ({"vars": {"bad name": "x"}}, "vars"),
        ({"question": "Capital of {country}?", "vars": {"city": "x"}}, "vars"),
        ({"template_version": "v" * 51}, "template_version"),
    ],
)
def test_a_bad_field_is_named(overrides, field):
    with pytest.raises(ValidationError) as info:
        clean_task(task_data(**overrides))
    assert fields_of(info) == [field]


def test_every_bad_field_is_listed_at_once_with_file_and_line():
    with pytest.raises(ValidationError) as info:
        clean_task({"task_id": "a b", "difficulty": "x"}, line=7, file="tasks.yaml")
    assert fields_of(info) == ["task_id", "category", "difficulty", "question", "excellent"]
    assert all(e["line"] == 7 and e["file"] == "tasks.yaml" for e in info.value.errors)


def test_a_rubric_alone_is_enough_reference():
    values = clean_task(
        task_data(
            excellent="",
            good="",
            pass_answer="",
            rubric=[{"id": "r1", "text": "Says Paris", "weight": 2, "max_score": 10}],
        )
    )
    assert values["rubric"] == [{"id": "r1", "text": "Says Paris", "weight": 2, "max_score": 10}]


def test_text_forms_of_rubric_tags_auto_fail_and_vars_are_parsed():
    values = clean_task(
        task_data(
            question="Capital of {country}?",
            rubric='[{"id": "r1", "text": "t", "weight": 1, "maxScore": 5}]',
            tags="geo, easy, geo",
            auto_fail="says Lyon\n\nsays Nice",
            vars="country = France",
        )
    )
    assert values["rubric"][0]["max_score"] == 5
    assert values["tags"] == ["geo", "easy"]
    assert values["auto_fail"] == ["says Lyon", "says Nice"]
    assert values["vars"] == {"country": "France"}


def test_variables_are_checked_only_when_vars_are_given():
    assert clean_task(task_data(question="Fill {blank}"))["vars"] is None


def test_create_task_with_a_taken_task_id_is_a_conflict(app):
    create_task(task_data())
    with pytest.raises(Conflict, match="geo_001"):
        create_task(task_data())
    assert Task.select().count() == 1


def test_create_task_errors_use_the_callers_spelling(app):
    with pytest.raises(ValidationError) as info:
        create_task(
            {
                "taskId": "",
                "category": "c",
                "question": "q",
                "pass": "p",
                "rubric": [{"id": "r", "text": "t", "weight": -1}],
            }
        )
    assert fields_of(info) == ["taskId", "rubric[0].weight"]


def test_update_task_keeps_fields_not_given(app):
    task = create_task(task_data(tags=["geo"]))
    update_task(task.id, {"question": "Capital of Italy?"})
    fresh = get_task(task.id)
    assert fresh.question == "Capital of Italy?" and fresh.tags == ["geo"]
    assert fresh.excellent == "Paris."


def test_update_task_to_a_taken_task_id_is_a_conflict(app):
    create_task(task_data())
    other = create_task(task_data(task_id="geo_002"))
    with pytest.raises(Conflict):
        update_task(other.id, {"taskId": "geo_001"})


def test_delete_task_removes_its_memberships(app):
    task = create_task(task_data())
    collection = create_collection("c")
    add_tasks_to_collection(collection.id, [task.id])
    delete_task(task.id)
    assert CollectionTask.select().count() == 0
    with pytest.raises(NotFound):
        get_task(task.id)


def _many(n, category="Math"):
    for i in range(n):
        create_task(
            task_data(
                task_id=f"{category.lower()}_{i:03d}",
                category=category,
                question=f"Question {i} about {category}",
            )
        )


def test_search_matches_task_id_question_category_and_tags(app):
    _many(3)
    create_task(task_data(tags=["europe"]))
    assert search_tasks("europe").total == 1
    assert search_tasks("MATH_00").total == 3
    assert search_tasks("Question 2").total == 1


def test_search_filters_by_category(app):
    _many(3)
    _many(2, "Logic")
    page = search_tasks(category="Logic")
    assert page.total == 2 and {t.category for t in page.items} == {"Logic"}
    assert list_categories() == ["Logic", "Math"]


def test_search_paginates(app):
    _many(12)
    page = search_tasks(page=2, per_page=5)
    assert (page.total, page.pages, len(page.items)) == (12, 3, 5)
    assert page.has_prev and page.has_next
    assert search_tasks(page=99, per_page=5).page == 3
    assert search_tasks(page="x", per_page="y").page == 1


# -- collections --------------------------------------------------------------------------


def test_collection_names_are_unique(app):
    create_collection("quick")
    with pytest.raises(Conflict):
        create_collection("quick")


def test_a_collection_needs_a_name(app):
    with pytest.raises(ValidationError) as info:
        create_collection("  ")
    assert fields_of(info) == ["name"]


def test_rename_a_collection(app):
    c = create_collection("old")
    update_collection(c.id, name="new")
    assert get_collection(c.id).name == "new"
    create_collection("taken")
    with pytest.raises(Conflict):
        update_collection(c.id, name="taken")


def test_adding_tasks_by_id_or_task_id(app):
    _many(3)
    c = create_collection("c")
    first = Task.get(Task.task_id == "math_000")
    add_tasks_to_collection(c.id, [first.id, "math_001"])
    assert collection_to_dict(c)["taskCount"] == 2


def test_adding_a_task_twice_is_a_conflict_naming_it_and_adds_nothing(app):
    _many(3)
    c = create_collection("c")
    add_tasks_to_collection(c.id, ["math_000"])
    with pytest.raises(Conflict, match="math_000"):
        add_tasks_to_collection(c.id, ["math_001", "math_000"])
    with pytest.raises(Conflict, match="math_002"):
        add_tasks_to_collection(c.id, ["math_002", "math_002"])
    assert collection_to_dict(c)["taskCount"] == 1


def test_adding_unknown_tasks_names_them(app):
    c = create_collection("c")
    with pytest.raises(ValidationError, match="999, nope"):
        add_tasks_to_collection(c.id, [999, "nope"])


def test_remove_a_task_from_a_collection(app):
    _many(2)
    c = create_collection("c")
    task = Task.get(Task.task_id == "math_000")
    add_tasks_to_collection(c.id, [task.id])
    remove_task_from_collection(c.id, task.id)
    assert collection_tasks(c) == []
    with pytest.raises(NotFound):
        remove_task_from_collection(c.id, task.id)


def test_deleting_a_collection_keeps_its_tasks(app):
    _many(2)
    c = create_collection("c")
    add_tasks_to_collection(c.id, ["math_000", "math_001"])
    delete_collection(c.id)
    assert Task.select().count() == 2 and CollectionTask.select().count() == 0


def test_list_collections_counts_tasks(app):
    _many(2)
    c = create_collection("b")
    create_collection("a")
    add_tasks_to_collection(c.id, ["math_000", "math_001"])
    assert [(x.name, x.task_count) for x in list_collections()] == [("a", 0), ("b", 2)]


def test_search_can_leave_out_a_collections_members(app):
    _many(3)
    c = create_collection("c")
    add_tasks_to_collection(c.id, ["math_000"])
    page = search_tasks(exclude_collection=c.id)
    assert [t.task_id for t in page.items] == ["math_001", "math_002"]


def test_system_prompt_variables_are_checked_against_vars():
    with pytest.raises(ValidationError) as info:
        clean_task(task_data(system_prompt="Answer in {language}", vars={"country": "France"}))
    assert fields_of(info) == ["system_prompt"]
    assert "{language}" in info.value.errors[0]["message"]
    values = clean_task(task_data(system_prompt="In {language}", vars={"language": "fr"}))
    assert values["system_prompt"] == "In {language}"


def test_question_and_system_prompt_variables_are_both_reported():
    with pytest.raises(ValidationError) as info:
        clean_task(task_data(question="Q {a}", system_prompt="S {b}", vars={"c": "1"}))
    assert fields_of(info) == ["vars", "system_prompt"]


@pytest.mark.parametrize("difficulty", [["hard"], {"level": "hard"}, True])
def test_a_difficulty_that_is_not_text_is_an_error_not_medium(difficulty):
    with pytest.raises(ValidationError) as info:
        clean_task(task_data(difficulty=difficulty))
    assert info.value.errors == [
        {"field": "difficulty", "message": "must be text (easy, medium or hard)"}
    ]


def test_a_reference_answer_can_be_optional():
    bare = task_data(excellent="", good="", pass_answer="")
    with pytest.raises(ValidationError) as info:
        clean_task(bare)
    assert fields_of(info) == ["excellent"]
    assert clean_task(bare, require_reference=False)["excellent"] == ""


def test_adding_task_ids_too_big_for_sqlite_names_them(app):
    c = create_collection("c")
    with pytest.raises(ValidationError) as info:
        add_tasks_to_collection(c.id, [2**70, str(2**64)])
    assert str(2**70) in info.value.errors[0]["message"]
    assert str(2**64) in info.value.errors[0]["message"]
