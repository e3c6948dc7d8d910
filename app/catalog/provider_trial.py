"""Test inference: one prompt to a provider, with timings, tokens, and a word when the model
asked for is not in the server's list."""

from ..errors import ValidationError
from ..providers import formats
from ..providers.interface import ProviderError
from .provider_models import adapter_for
from .provider_models import call_adapter
from .provider_models import close_adapter
from .provider_models import list_models
from .providers import get_provider

TEST_MAX_TOKENS = 512
MODEL_CHECK_SECONDS = 5.0


def run_test_inference(provider_id, model, prompt):
    """Send one prompt; returns answer, timings, tokens and raw JSON, or a clear error."""
    provider = get_provider(provider_id)
    model = (model or "").strip() if isinstance(model, str) else model
    prompt = prompt.strip() if isinstance(prompt, str) else prompt
    errors = []
    if not model or not isinstance(model, str):
        errors.append({"field": "model", "message": "choose or type a model"})
    if not prompt or not isinstance(prompt, str):
        errors.append({"field": "prompt", "message": "enter a prompt"})
    if errors:
        raise ValidationError(errors)
    result = {
        "success": False,
        "provider": provider.name,
        "model": model,
        "asked_model": model,
        "model_warning": _model_not_listed(provider, model),
        "answer": None,
        "wall_ms": None,
        "ttft_ms": None,
        "tokens": None,
        "prompt_tokens": None,
        "tokens_per_second": None,
        "tps_source": None,
        "tokens_estimated": False,
        "raw": None,
        "error": None,
    }
    config = adapter = None
    try:
        config, adapter = adapter_for(provider)
        completion = call_adapter(
            provider,
            config,
            lambda: adapter.chat(
                model,
                [{"role": "user", "content": prompt}],
                {"max_tokens": TEST_MAX_TOKENS},
                stream=True,
            ),
        )
    except ProviderError as exc:
        result["error"] = exc.message
        result["raw"] = exc.raw if isinstance(exc.raw, str) else None
        return result
    finally:
        close_adapter(adapter)
    result.update(
        success=True,
        answer=completion.text,
        model=completion.model or model,
        wall_ms=completion.wall_ms,
        ttft_ms=completion.ttft_ms,
        tokens=completion.completion_tokens,
        prompt_tokens=completion.prompt_tokens,
        tokens_per_second=completion.tokens_per_second,
        tps_source=completion.tps_source,
        tokens_estimated=completion.tokens_estimated,
        raw=completion.raw_json if completion.raw_json is not None else completion.raw,
    )
    return result


def _model_not_listed(provider, model):
    """A sentence when the server's model list (asked briefly, cached) does not hold `model`;
    None when it does, or when the list cannot be had."""
    try:
        ids = [str(m["id"]) for m in list_models(provider.id, timeout=MODEL_CHECK_SECONDS)]
    except ProviderError:
        return None
    # Ollama reads a name without a tag as name:latest.
    tag = formats.wire_format(provider.type).implicit_tag
    tagged = f"{model}:{tag}" if tag and ":" not in model else None
    if model in ids or tagged in ids or not ids:
        return None
    close = [i for i in ids if model.lower() in i.lower() or i.lower() in model.lower()]
    shown = ", ".join((close or ids)[:5]) + (" …" if len(close or ids) > 5 else "")
    hint = "did you mean" if close else "it lists"
    return (
        f"{model} is not in {provider.name}'s model list ({len(ids)} models; {hint} {shown}). "
        "The server may answer with another model, or load it by that name."
    )


def inference_to_dict(result):
    """run_test_inference() result in the API's camelCase."""
    return {
        "success": result["success"],
        "provider": result["provider"],
        "model": result["model"],
        "answer": result["answer"],
        "wallMs": result["wall_ms"],
        "ttftMs": result["ttft_ms"],
        "tokens": result["tokens"],
        "promptTokens": result["prompt_tokens"],
        "tokensPerSecond": result["tokens_per_second"],
        "tpsSource": result["tps_source"],
        "tokensEstimated": result["tokens_estimated"],
        "raw": result["raw"],
        "error": result["error"],
        "askedModel": result["asked_model"],
        "modelWarning": result["model_warning"],
    }
