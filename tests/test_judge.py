"""The judge: prompt, schema, strict validation, our weighted rubric score, one repair request."""

import json
from types import SimpleNamespace

import pytest

from app.providers.interface import ProviderConfig
from app.providers.registry import get_adapter
from app.scoring import rubric as judge
from app.scoring.judge_calls import JudgeError
from app.scoring.judge_calls import judge_params
from app.scoring.replies import JudgeOutputError

RUBRIC = [
    {"id": "facts", "text": "States the facts", "weight": 2, "max_score": 4},
    {"id": "tone", "text": "Polite", "weight": 1, "max_score": 1},
]


def make_item(**fields):
    values = {
        "question": "What is 2+2?",
        "excellent": "4, with why",
        "good": "4",
        "pass_answer": "about 4",
        "incorrect_direction": "anything but 4",
        "rubric": None,
        "auto_fail_rules": None,
        "answer": "It is 4.",
    }
    values.update(fields)
    return SimpleNamespace(**values)


def reply(**data):
    return json.dumps({"score": 70, "reason": "fine", "auto_fail": False, **data})


def test_prompt_holds_question_references_direction_and_answer():
    system, user = judge.build_judge_messages(make_item())
    assert system == {"role": "system", "content": judge.JUDGE_SYSTEM_PROMPT}
    text = user["content"]
    for part in (
        "What is 2+2?",
        "4, with why",
        "Good answer (score 70-89): 4",
        "Passing answer (score 50-69): about 4",
        "anything but 4",
        "It is 4.",
    ):
        assert part in text
    assert "Rubric" not in text and "Auto-fail" not in text


def test_prompt_lists_rubric_items_and_auto_fail_rules():
    text = judge.build_judge_messages(make_item(rubric=RUBRIC, auto_fail_rules=["insults"]))[1][
        "content"
    ]
    assert '"facts" (weight 2, score 0-4): States the facts' in text
    assert "- insults" in text and '"rubric_scores"' in text


def test_schema_without_rubric():
    schema = judge.judge_schema(make_item())
    assert schema["required"] == ["score", "reason"] and "auto_fail" not in schema["properties"]
    assert schema["properties"]["score"] == {"type": "integer", "minimum": 0, "maximum": 100}
    assert schema["properties"]["reason"]["maxLength"] == judge.REASON_MAX_LENGTH
    assert schema["additionalProperties"] is False


def test_schema_asks_for_auto_fail_only_with_rules():
    schema = judge.judge_schema(make_item(auto_fail_rules=["insults"]))
    assert schema["required"] == ["score", "reason", "auto_fail"]
    assert schema["properties"]["auto_fail"] == {"type": "boolean"}


def test_schema_with_rubric_bounds_each_score():
    rubric = judge.judge_schema(make_item(rubric=RUBRIC))["properties"]["rubric_scores"]
    assert rubric["properties"]["facts"] == {"type": "integer", "minimum": 0, "maximum": 4}
    assert rubric["required"] == ["facts", "tone"] and rubric["additionalProperties"] is False


def test_schema_keeps_a_fractional_rubric_maximum_as_a_number():
    item = make_item(rubric=[{"id": "x", "text": "x", "weight": 1, "max_score": 2.5}])
    bound = judge.judge_schema(item)["properties"]["rubric_scores"]["properties"]["x"]
    assert bound == {"type": "number", "minimum": 0, "maximum": 2.5}


def test_valid_judgement_is_parsed():
    result = judge.parse_judgement(reply(score=85, reason=" good "), make_item())
    assert result == {
        "score": 85.0,
        "judge_score": 85,
        "reason": "good",
        "rubric_scores": None,
        "auto_fail": False,
        "auto_fail_reason": None,
    }


def test_a_fenced_json_block_is_accepted():
    assert judge.parse_judgement("```json\n" + reply() + "\n```", make_item())["score"] == 70


@pytest.mark.parametrize(
    "text, why",
    [
        ("", "empty"),
        ("The answer is good. Score: 80", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        (json.dumps({"reason": "x"}), '"score"'),
        (reply(score=101), '"score"'),
        (reply(score=-1), '"score"'),
        (reply(score=7.5), '"score"'),
        (reply(score="80"), '"score"'),
        (reply(score=True), '"score"'),
        (reply(reason=""), '"reason"'),
        (reply(reason=5), '"reason"'),
        (reply(auto_fail="no"), '"auto_fail"'),
    ],
)
def test_invalid_judgements_say_why(text, why):
    with pytest.raises(JudgeOutputError, match=why):
        judge.parse_judgement(text, make_item(auto_fail_rules=["insults"]))


def test_cut_off_output_is_invalid():
    with pytest.raises(JudgeOutputError, match="cut off"):
        judge.parse_judgement(reply(), make_item(), finish_reason="length")


def test_rubric_score_is_our_weighted_sum_not_the_judges():
    result = judge.parse_judgement(
        reply(score=10, rubric_scores={"facts": 3, "tone": 1}), make_item(rubric=RUBRIC)
    )
    assert result["score"] == pytest.approx(100 * (2 * 3 / 4 + 1 * 1) / 3, abs=0.01)
    assert result["judge_score"] == 10 and result["rubric_scores"] == {"facts": 3, "tone": 1}


def test_missing_rubric_ids_count_zero():
    result = judge.parse_judgement(reply(rubric_scores={"tone": 1}), make_item(rubric=RUBRIC))
    assert result["score"] == pytest.approx(100 / 3, abs=0.01)
    assert result["rubric_scores"] == {"facts": 0, "tone": 1}
    assert result["reason"] == "fine [no rubric score for facts: counted as 0]"


@pytest.mark.parametrize("missing", [{}, {"rubric_scores": None}])
def test_a_judgement_without_rubric_scores_is_scored_with_each_item_at_zero(missing):
    text = json.dumps({"score": 70, "reason": "fine", **missing})
    result = judge.parse_judgement(text, make_item(rubric=RUBRIC))
    assert result["score"] == 0.0 and result["rubric_scores"] == {"facts": 0, "tone": 0}
    assert result["reason"] == "fine [no rubric score for facts, tone: counted as 0]"


@pytest.mark.parametrize(
    "scores, why",
    [
        ({"facts": 5}, "from 0 to 4"),
        ({"facts": -1}, "from 0 to 4"),
        ({"style": 1}, "unknown ids"),
        ("all good", "rubric_scores"),
    ],
)
def test_rubric_scores_out_of_bounds_are_invalid(scores, why):
    with pytest.raises(JudgeOutputError, match=why):
        judge.parse_judgement(reply(rubric_scores=scores), make_item(rubric=RUBRIC))


def test_auto_fail_scores_zero():
    result = judge.parse_judgement(
        reply(score=90, auto_fail=True, rubric_scores={"facts": 4, "tone": 1}),
        make_item(rubric=RUBRIC, auto_fail_rules=["insults"]),
    )
    assert result["score"] == 0.0 and result["auto_fail"] is True


def test_auto_fail_without_rules_is_ignored():
    result = judge.parse_judgement(reply(score=90, auto_fail=True), make_item())
    assert result["score"] == 90.0 and result["auto_fail"] is False


def test_prompt_hash_is_stable_and_64_hex():
    assert len(judge.PROMPT_HASH) == 64 and int(judge.PROMPT_HASH, 16) >= 0


def test_judge_params_default_to_deterministic():
    assert judge_params(None) == {"temperature": 0, "max_tokens": 1024}
    assert judge_params({"temperature": 0.3, "seed": None})["temperature"] == 0.3


def adapter_for(fake, type="OPENAI"):
    endpoint = "/api/chat" if type == "OLLAMA" else "/v1/chat/completions"
    return get_adapter(
        ProviderConfig(
            name="j",
            type=type,
            base_url=fake.url,
            models_endpoint="/v1/models",
            inference_endpoint=endpoint,
            timeout=5,
        )
    )


def test_judge_item_asks_for_structured_output(fake):
    result = judge.judge_item(adapter_for(fake), "judge", make_item())
    assert result["score"] == 80.0 and result["reason"] == "fake judge"
    body = fake.chat_calls()[0]["body"]
    assert body["response_format"]["json_schema"]["schema"] == judge.judge_schema(make_item())
    assert body["temperature"] == 0 and result["request"] == body and len(result["raws"]) == 1


def test_judge_item_on_ollama_sends_the_schema_as_format(fake):
    judge.judge_item(adapter_for(fake, "OLLAMA"), "judge", make_item(), keep_alive="10m")
    body = fake.chat_calls()[0]["body"]
    assert body["format"] == judge.judge_schema(make_item()) and body["keep_alive"] == "10m"


def test_judge_item_repairs_once(fake):
    fake.enqueue("not json at all")
    fake.enqueue(reply(score=55))
    result = judge.judge_item(adapter_for(fake), "judge", make_item())
    assert result["score"] == 55.0 and len(result["raws"]) == 2
    repair = fake.chat_calls()[1]["body"]["messages"]
    assert repair[-2]["content"] == "not json at all"
    assert "corrected JSON object only" in repair[-1]["content"]


def test_judge_item_gives_up_after_the_repair(fake):
    fake.enqueue("nope")
    fake.enqueue(reply(score=500))
    with pytest.raises(JudgeError, match="after one repair") as exc:
        judge.judge_item(adapter_for(fake), "judge", make_item())
    assert exc.value.transient is True and len(exc.value.raws) == 2
    assert len(fake.chat_calls()) == 2


def test_judge_item_keeps_provider_error_class(fake):
    fake.enqueue(status=404, text="model 'judge' not found")
    with pytest.raises(JudgeError, match="not found") as exc:
        judge.judge_item(adapter_for(fake), "judge", make_item())
    assert exc.value.transient is False
