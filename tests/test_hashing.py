"""Canonical JSON hashes: a list hashed value by value is the hash of the whole list."""

import pytest

from app.hashing import sha256_json
from app.hashing import sha256_json_list


@pytest.mark.parametrize(
    "values",
    [[], [1], ["é", None, 2.5], [{"b": 1, "a": "ü"}, [2, {"z": []}]]],
)
def test_a_list_hashed_value_by_value_hashes_as_the_whole_list(values):
    assert sha256_json_list(iter(values)) == sha256_json(values)
