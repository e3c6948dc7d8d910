"""Web pages: providers (list, add/edit with header rows, delete, refresh models, test)."""

from flask import Blueprint
from flask import flash
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for

from ..catalog.provider_fields import DEFAULT_ENDPOINTS
from ..catalog.provider_models import list_models
from ..catalog.provider_presets import DEFAULT_BASE_URLS
from ..catalog.provider_presets import PRESETS
from ..catalog.provider_presets import TYPE_CHOICES
from ..catalog.provider_presets import apply_preset
from ..catalog.provider_presets import new_provider_form
from ..catalog.provider_trial import run_test_inference
from ..catalog.providers import create_provider
from ..catalog.providers import delete_provider
from ..catalog.providers import get_provider
from ..catalog.providers import header_rows
from ..catalog.providers import list_providers
from ..catalog.providers import update_provider
from ..errors import Conflict
from ..errors import ValidationError
from ..ids import digits_number
from ..providers.formats import wire_format
from ..providers.interface import ProviderError
from ..providers.urls import mask_url
from .extensions import htmx
from .settings import errors_by_field
from .settings import form_errors

bp = Blueprint("providers", __name__, url_prefix="/settings/providers")


@bp.app_template_filter("server_name")
def server_name(provider):
    """What to start when a provider is not reachable: its server's name, else "the server"."""
    name = wire_format(provider.type).server_name if provider is not None else None
    return name or "the server"


@bp.app_template_filter("masked_url")
def masked_url(value):
    """A URL or endpoint with its credentials shown as ****."""
    return mask_url(value or "")


EMPTY_HEADER_ROWS = 3


def _with_rows(provider):
    provider.header_rows = header_rows(provider)
    return provider


def _form_from_request(form):
    """The submitted form as the store's camelCase dict (header rows gathered by index)."""
    data = {
        k: form.get(k, "")
        for k in (
            "name",
            "type",
            "baseUrl",
            "modelsEndpoint",
            "inferenceEndpoint",
            "timeoutSeconds",
            "maxConcurrency",
        )
    }
    indices = sorted(
        {
            digits_number(k.split("-")[1])
            for k in form
            if k.startswith("headers-") and digits_number(k.split("-")[1]) is not None
        }
    )
    data["headers"] = [
        {
            "id": form.get(f"headers-{i}-id", ""),
            "key": form.get(f"headers-{i}-key", ""),
            "value": form.get(f"headers-{i}-value", ""),
            "isSecret": bool(form.get(f"headers-{i}-isSecret")),
        }
        for i in indices
    ]
    return data


def _form_from_provider(provider):
    rows = [
        {
            "id": h["id"],
            "key": h["key"],
            "value": "" if h["isSecret"] else h["value"],
            "valueMasked": h["valueMasked"],
            "isSecret": h["isSecret"],
        }
        for h in header_rows(provider)
    ]
    return {
        "name": provider.name,
        "type": provider.type,
        "baseUrl": provider.base_url,
        # Masked: a row saved before endpoints were checked may carry a key; saved again
        # masked, it is refused at the field (no credentials in an endpoint).
        "modelsEndpoint": mask_url(provider.models_endpoint),
        "inferenceEndpoint": mask_url(provider.inference_endpoint),
        "timeoutSeconds": f"{provider.timeout_seconds:g}",
        "maxConcurrency": provider.max_concurrency,
        "headers": rows,
    }


def _render_form(form, provider=None, errors=None, status=200):
    masked = {}
    if provider is not None:
        masked = {h["id"]: h["valueMasked"] for h in header_rows(provider) if h["isSecret"]}
    for row in form["headers"]:
        row_id = str(row.get("id") or "")
        if row.get("isSecret") and not row.get("valueMasked") and digits_number(row_id):
            row["valueMasked"] = masked.get(digits_number(row_id))
    form["headers"] = [r for r in form["headers"] if r.get("key") or r.get("value")]
    form["headers"] += [{}] * EMPTY_HEADER_ROWS
    return render_template(
        "providers/form.html",
        form=form,
        provider=provider,
        errors=errors or {},
        presets=PRESETS,
        default_base_urls=DEFAULT_BASE_URLS,
        default_endpoints=DEFAULT_ENDPOINTS,
        type_choices=TYPE_CHOICES,
        preset_key=request.args.get("preset", ""),
        subnav_active="providers",
    ), status


@bp.get("/")
def index():
    """All providers with their actions."""
    providers = [_with_rows(p) for p in list_providers()]
    return render_template("providers/index.html", providers=providers, subnav_active="providers")


@bp.get("/new")
def new():
    """A new provider's form: Ollama's defaults, or a preset's (?preset=vllm)."""
    return _render_form(new_provider_form(request.args.get("preset")))


@bp.post("/new")
def create():
    """Save a new provider, or show the form again with what is wrong."""
    form = _form_from_request(request.form)
    try:
        provider = create_provider(form)
    except (ValidationError, Conflict) as exc:
        return _render_form(form, None, *form_errors(exc))
    flash(f"Provider {provider.name} added. Refresh its models to check the connection.", "success")
    if provider.base_url_note:
        flash(provider.base_url_note, "info")
    return redirect(url_for("providers.index"))


@bp.get("/<int:provider_id>/edit")
def edit(provider_id):
    """The provider form, secret values masked (?preset= fills a preset's server fields)."""
    provider = get_provider(provider_id)
    form = apply_preset(_form_from_provider(provider), request.args.get("preset"))
    return _render_form(form, provider)


@bp.post("/<int:provider_id>/edit")
def update(provider_id):
    """Save changes; an empty secret value keeps the stored one."""
    provider = get_provider(provider_id)
    form = _form_from_request(request.form)
    try:
        provider = update_provider(provider_id, form)
    except (ValidationError, Conflict) as exc:
        return _render_form(form, provider, *form_errors(exc))
    flash(f"Provider {provider.name} saved.", "success")
    if provider.base_url_note:
        flash(provider.base_url_note, "info")
    if provider.secrets_cleared:
        flash(
            f"The base URL now points at another server, so the stored secret values of "
            f"{', '.join(provider.secrets_cleared)} were cleared and will not be sent there; "
            "enter them again if that server needs them.",
            "error",
        )
    return redirect(url_for("providers.index"))


@bp.post("/<int:provider_id>/delete")
def delete(provider_id):
    """Delete a provider (htmx: remove its card)."""
    provider = get_provider(provider_id)
    delete_provider(provider_id)
    if htmx:
        return ""
    flash(f"Provider {provider.name} deleted.", "success")
    return redirect(url_for("providers.index"))


def _models(provider_id, refresh):
    try:
        return list_models(provider_id, refresh=refresh), None
    except ProviderError as exc:
        return None, exc.message


@bp.get("/<int:provider_id>")
def show(provider_id):
    """One provider: its models (asked from the server) and the test form."""
    provider = get_provider(provider_id)
    models, error = _models(provider_id, refresh=bool(request.args.get("refresh")))
    return render_template(
        "providers/show.html",
        provider=provider,
        models=models,
        models_error=error,
        subnav_active="providers",
    )


@bp.get("/<int:provider_id>/models")
def models_fragment(provider_id):
    """Fragment #models-<id>: the model list or the error, asked fresh with ?refresh=1."""
    provider = get_provider(provider_id)
    models, error = _models(provider_id, refresh=bool(request.args.get("refresh")))
    return render_template(
        "providers/_models.html", provider=provider, models=models, models_error=error
    )


def _test(provider_id):
    form = request.form
    test = {"model": form.get("model", ""), "prompt": form.get("prompt", "")}
    try:
        return test, run_test_inference(provider_id, test["model"], test["prompt"]), None
    except ValidationError as exc:
        return test, None, errors_by_field(exc)


@bp.post("/<int:provider_id>/test")
def test_inference(provider_id):
    """Send a test prompt and show the provider page with the answer (no JS)."""
    provider = get_provider(provider_id)
    test, result, errors = _test(provider_id)
    # The models are not asked again here: a server that is down would double the wait.
    return render_template(
        "providers/show.html",
        provider=provider,
        models=None,
        models_error=None,
        test=test,
        result=result,
        test_errors=errors,
        subnav_active="providers",
    ), 400 if errors else 200


@bp.post("/<int:provider_id>/test/fragment")
def test_inference_fragment(provider_id):
    """Fragment #provider-test-<id>: the test answer with time, TTFT, tokens, tokens/s."""
    provider = get_provider(provider_id)
    test, result, errors = _test(provider_id)
    if errors:
        result = {"success": False, "error": "; ".join(errors.values()), "raw": None}
    return render_template("providers/_test_result.html", provider=provider, result=result)
