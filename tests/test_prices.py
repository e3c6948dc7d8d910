"""The price table: PUT /api/prices validates every key; unknown keys are named, not ignored."""

import pytest

from app.db.models import Price


@pytest.mark.parametrize(
    "body, field",
    [
        ({"providerName": "or", "model": "m", "inputPerMillion": 3}, "inputPerMillion"),
        (
            [
                {"providerName": "or", "model": "m"},
                {"providerName": "or", "model": "n", "output": 1},
            ],
            "[1].output",
        ),
    ],
)
def test_an_unknown_price_key_is_400_naming_it(client, body, field):
    response = client.put("/api/prices", json=body)
    assert response.status_code == 400
    assert [e["field"] for e in response.json["errors"]] == [field]
    assert Price.select().count() == 0  # all or nothing


def test_the_unknown_key_message_suggests_the_right_name(client):
    response = client.put(
        "/api/prices", json={"providerName": "or", "model": "m", "inputPerMillion": 3}
    )
    assert "did you mean inputPer1m?" in response.json["errors"][0]["message"]


def test_a_row_as_get_returns_it_can_be_put_back(client):
    [row] = client.put(
        "/api/prices", json={"providerName": "or", "model": "m", "inputPer1m": 1, "outputPer1m": 2}
    ).json
    row["outputPer1m"] = 4
    [again] = client.put("/api/prices", json=row).json
    assert (again["id"], again["outputPer1m"]) == (row["id"], 4.0)
