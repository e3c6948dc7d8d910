"""The interface every provider adapter offers and returns (no HTTP here).

An adapter is built from a plain ProviderConfig (headers already decrypted) and offers:
  list_models() -> list[dict]            each {"id": str, ...metadata}
  chat(model, messages, params=None, *, stream=True, json_schema=None,
       keep_alive=None, cancel=None, tools=None) -> Completion
                                         tools: OpenAI function schemas offered to the model;
                                         the answer's calls come back in Completion.tool_calls
  unload(model) -> None                  frees the model's memory where the server supports it
  loaded_models(timeout=None) -> list    models currently in memory (Ollama /api/ps), else []
Errors are ProviderError, classified transient or permanent, with no secret in the text.

Each wire format declares what it can do (WireFormat below) in formats.py, which loads no HTTP
client, so the rest of the app asks the format instead of comparing type strings; each adapter
subclasses its format, and registry.py maps a type to its adapter class.
"""

from dataclasses import dataclass
from dataclasses import field

from ..latency import summary

MAX_ANSWER_CHARS = 1024 * 1024  # answer text kept per call (1 MiB); the rest is cut and flagged


class WireFormat:
    """The capabilities every wire format declares, each in its own class body (formats.py; a
    test holds every format to it). These values answer for a type llmbench does not speak:
    it can do nothing, so a stored row of an unknown type is never treated as one it speaks."""

    type = None  # the provider type stored on a provider row: OPENAI, OLLAMA
    label = None  # the type's name in the provider form's choices
    server_name = None  # the server a person starts when one is not reachable ("Ollama")
    default_base_url = None  # the base URL a new provider of this type starts with
    models_path = None  # GET: the models the server offers (the models endpoint's default)
    chat_path = None  # POST: one chat (the inference endpoint's default)
    api_prefix = None  # the paths' first segment: a base URL ending in it would double it
    streams = False  # answers arrive while they are made, so the time to first token is measured
    server_timings = False  # every answer carries the server's own token counts and decode time
    keeps_models_loaded = False  # a call's keep_alive holds the model in memory; unload() frees it
    reports_loaded_models = False  # loaded_models() says which models are in memory now
    takes_routing = False  # OpenRouter's routing preferences ride in the request body
    implicit_tag = None  # the tag a model name without one stands for (Ollama: latest)


CAPABILITIES = tuple(name for name in vars(WireFormat) if not name.startswith("_"))


@dataclass
class ProviderConfig:
    """What an adapter needs to talk to one model server (no database objects)."""

    name: str
    type: str  # a registered wire format (formats.TYPES)
    base_url: str
    models_endpoint: str
    inference_endpoint: str
    headers: dict = field(default_factory=dict)  # decrypted; never log these
    timeout: float = 120.0
    max_concurrency: int = 1
    id: int | None = None
    max_answer_chars: int = MAX_ANSWER_CHARS


@dataclass
class Completion:
    """One model answer with its metrics, as measured by us and as reported by the server."""

    text: str
    model: str | None = None  # the model the server says answered
    finish_reason: str | None = None
    wall_ms: float = 0.0  # request sent -> last byte
    # Streamed answers only (None when not streamed), each from when the request was sent:
    ttft_ms: float | None = None  # -> the first token on any channel (reasoning, answer, tool)
    first_answer_ms: float | None = None  # -> the first answer token (content or a tool call)
    last_token_ms: float | None = None  # -> the last token on any channel
    sent_at: float | None = None  # wall clock (time.time()) when the request was sent
    chunks: int | None = None  # stream events that carried tokens
    # The gaps in ms between consecutive token-bearing events (inter-token latency); empty when
    # the stream sent everything in one event or was not streamed.
    gaps_ms: list = field(default_factory=list)
    reasoning_text: str | None = None  # the reasoning apart from the answer (never in `text`)
    reasoning_tokens: int | None = None  # the server's count, else the reasoning pieces counted
    prompt_tokens: int | None = None
    completion_tokens: int | None = None  # every generated token, reasoning included
    tokens_per_second: float | None = None  # decode speed only, never total/latency
    tps_source: str | None = None  # ollama.eval | llamacpp.timings | stream.estimate | ...
    tokens_estimated: bool = False  # token counts guessed (no server counter)
    prompt_ms: float | None = None  # prompt processing time
    decode_ms: float | None = None  # generation time
    load_ms: float | None = None  # model load time reported by the server
    cost_usd: float | None = None  # provider-reported cost (OpenRouter usage.cost)
    request: dict | None = None  # body we sent (no headers)
    raw: str = ""  # the raw response body (for streams: every line, as received)
    raw_json: dict | None = None  # the final response assembled as one JSON object
    answer_cut: bool = False  # the answer passed the size cap: the rest was not read
    # The tools the answer called, [{"name", "arguments"}] (arguments a dict when they are
    # JSON, else the text as sent), or None when it called none.
    tool_calls: list | None = None

    @property
    def itl(self):
        """Inter-token latency {"mean", "p50", "p90", "p99", "max"} in ms, or None when it is
        not measurable (a one-chunk or unstreamed answer has no gaps)."""
        return summary(self.gaps_ms)


class ProviderError(Exception):
    """A call to a model server failed. `transient` errors are worth retrying."""

    def __init__(
        self,
        message,
        *,
        transient,
        kind,
        status=None,
        retry_after=None,
        raw=None,
        unreachable=None,
        busy=None,
    ):
        super().__init__(message)
        self.message = message
        self.transient = transient
        # connection, timeout, rate_limit, server, client, not_found, malformed, cancelled
        self.kind = kind
        self.status = status
        self.retry_after = retry_after  # seconds, from Retry-After
        self.raw = raw
        # Why the server could not be reached at all (connection refused, host name not found,
        # connect timeout), else None: such an error belongs to the server, not to the request.
        self.unreachable = unreachable
        # Why a server that answered cannot take the call now (429, 503, a model still
        # loading), else None: like `unreachable`, it belongs to the server, not the request.
        self.busy = busy


class Cancelled(ProviderError):
    """The request was abandoned because the run was stopped."""

    def __init__(self, message="request abandoned: the run was stopped"):
        super().__init__(message, transient=True, kind="cancelled")
