"""A task imported from a line file is stored exactly as the task store cleans it: every field,
lists and mappings as JSON, whatever way its row is written (importer._task_row)."""

from app.datasets import importer
from app.datasets import jsonl_tasks
from app.datasets.common import TASK_FIELDS
from app.datasets.common import Problems
from app.datasets.validate import finish
from app.db.models import Collection
from app.db.models import Task

LINE = (
    '{"id": "full1", "category": "Water", "difficulty": "Hard", "scenario": ["A bullet"], '
    '"prompt": "Say {x}", "rubric": [{"id": "r1", "text": "Is kind", "weight": 2, '
    '"maxScore": 3}], "auto_fail": ["Rude"], "version": "v2", "source": "manual", '
    '"subcategory": "Rivers", "system_prompt": "Be brief", "excellent": "E", "good": "G", '
    '"pass": "P", "incorrect_direction": "I", "tags": ["t1"], "vars": {"x": "hi \\u00e9"}, '
    '"checks": [{"type": "contains", "value": "hi"}]}\n'
    '{"id": "bare1", "category": "Fire", "difficulty": "Easy", "scenario": [], '
    '"prompt": "Q?", "rubric": [], "auto_fail": []}\n'
)


def cleaned(line):
    problems = Problems()
    (task,) = jsonl_tasks.iter_tasks([line], "bank.jsonl", problems)
    return finish(task, problems)


def test_every_field_of_an_imported_line_is_stored_as_the_task_store_cleans_it(app):
    importer.import_tasks(LINE.encode(), filename="bank.jsonl", collection="bank")
    for line in LINE.splitlines(keepends=True):
        want = cleaned(line)
        task = Task.get(Task.task_id == want["task_id"])
        assert {name: getattr(task, name) for name in TASK_FIELDS} == {
            name: want.get(name) for name in TASK_FIELDS
        }
        assert task.created_at is not None and task.created_at == task.updated_at


def test_an_imported_files_tasks_all_join_its_collection(app):
    importer.import_tasks(LINE.encode(), filename="bank.jsonl", collection="bank")
    members = Collection.get(Collection.name == "bank").memberships
    assert sorted(m.task.task_id for m in members) == ["bare1", "full1"]
