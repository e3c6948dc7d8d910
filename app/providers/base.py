"""Shared HTTP for adapters: one Session, timeouts on every call, errors a person understands."""

import json
import re
import time
import weakref
from email.utils import parsedate_to_datetime
from http import HTTPStatus

import requests

from .interface import Cancelled
from .interface import ProviderError

CONNECT_TIMEOUT = 10.0  # seconds; a server that does not accept within this is down
ERROR_SNIPPET = 200


def redact(text, secrets):
    """Text with every secret (and every long word of a secret, e.g. a Bearer token) masked."""
    if not text:
        return text
    words = set()
    for secret in secrets or ():
        if not secret:
            continue
        secret = str(secret)
        words.add(secret)
        words.update(w for w in secret.split() if len(w) >= 4)
    for word in sorted(words, key=len, reverse=True):
        text = text.replace(word, "****")
    # Credentials in a URL (http://user:pass@host) are secrets too.
    return re.sub(r"//[^/@\s]+@", "//****@", text)


def parse_retry_after(value, now=None):
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date), else None."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


def error_message_from_body(text):
    """The human part of an error body: error.message / error / message / detail, else the text."""
    try:
        data = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:ERROR_SNIPPET]
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            err = err.get("message") or err.get("detail") or err.get("error") or json.dumps(err)
        elif err is None:
            err = data.get("message") or data.get("detail") or json.dumps(data)
        return str(err)[:ERROR_SNIPPET]
    return str(data)[:ERROR_SNIPPET]


def is_model_not_found(message):
    """True for the ways servers say an unknown model was asked for."""
    low = message.lower()
    return "model" in low and ("not found" in low or "does not exist" in low or "no such" in low)


class HttpAdapter:
    """Base class: holds the config and a requests.Session with the provider's headers."""

    def __init__(self, config):
        self.config = config
        self.session = requests.Session()
        self.session.headers.update({k: str(v) for k, v in (config.headers or {}).items()})
        self._secrets = [str(v) for v in (config.headers or {}).values() if v]
        # Close pooled sockets when the adapter is dropped (no ResourceWarning under pytest).
        self._finalizer = weakref.finalize(self, self.session.close)

    def close(self):
        """Close the pooled connections."""
        self._finalizer()

    @property
    def timeout(self):
        """(connect, read) timeouts for requests, from the provider's timeout."""
        total = float(self.config.timeout or 120.0)
        return (min(CONNECT_TIMEOUT, total), total)

    def url(self, endpoint):
        """Base URL joined with an endpoint path."""
        return self.config.base_url.rstrip("/") + "/" + (endpoint or "").lstrip("/")

    def redact(self, text):
        """Text without any of this provider's header values."""
        return redact(text, self._secrets)

    def error(self, message, **kw):
        """A ProviderError whose message and raw text carry no secret."""
        if kw.get("raw") is not None:
            kw["raw"] = self.redact(kw["raw"])
        return ProviderError(self.redact(message), **kw)

    def malformed(self, message, raw):
        """A permanent ProviderError for a reply we cannot use (its first 10,000 chars kept)."""
        return self.error(message, transient=False, kind="malformed", raw=raw[:10000])

    def no_model_list(self, data, key):
        """The error for a models endpoint whose reply holds no `key` array."""
        return self.malformed(
            f"Server sent no model list from {self.url(self.models_endpoint)} "
            f"(expected a '{key}' array)",
            json.dumps(data),
        )

    # ---- requests ------------------------------------------------------------------------
    def request(self, method, endpoint, *, json_body=None, stream=False, cancel=None, timeout=None):
        """Send one request; a >= 400 answer or a network failure raises ProviderError."""
        check_cancel(cancel)
        url = self.url(endpoint)
        timeout = timeout or self.timeout
        for attempt in (1, 2):
            try:
                resp = self.session.request(
                    method, url, json=json_body, stream=stream, timeout=timeout
                )
                break
            except requests.ConnectionError as exc:
                # A pooled keep-alive connection the server had just closed (llama.cpp closes
                # them after a few requests) fails before any answer: one retry on a new one.
                if attempt == 1 and _closed_without_answer(exc):
                    check_cancel(cancel)
                    continue
                raise self.network_error(exc, url, timeout) from None
            except requests.RequestException as exc:
                raise self.network_error(exc, url, timeout) from None
        if resp.status_code >= 400:
            try:
                body = resp.text
            except requests.RequestException:
                body = ""
            finally:
                resp.close()
            raise self.http_error(resp.status_code, resp.reason, body, resp.headers, url)
        return resp

    def get_json(self, endpoint, *, cancel=None, timeout=None):
        """GET an endpoint and parse its JSON body."""
        resp = self.request("GET", endpoint, cancel=cancel, timeout=timeout)
        return self.parse_json(self.read_text(resp, self.url(endpoint)), self.url(endpoint))

    def read_text(self, resp, url):
        """The whole body as text (network failures normalised); closes the response."""
        try:
            return resp.text
        except requests.RequestException as exc:
            raise self.network_error(exc, url, self.timeout, mid_stream=True) from None
        finally:
            resp.close()

    def parse_json(self, text, url):
        """JSON from a body, or a permanent 'malformed' ProviderError."""
        try:
            return json.loads(text)
        except ValueError:
            snippet = " ".join(text.split())[:ERROR_SNIPPET]
            hint = " (is the base URL / endpoint right?)" if snippet.startswith("<") else ""
            raise self.malformed(
                f"Server sent a response from {url} that is not valid JSON{hint}: {snippet!r}", text
            ) from None

    @staticmethod
    def drain(resp, limit=65536):
        """Read what is left of a finished stream so the connection goes back to the pool.

        Servers end the body right after their last event; without this every request would
        open a new TCP (and TLS) connection. Bounded, and any error just means no reuse.
        """
        try:
            read = 0
            while read < limit:
                chunk = resp.raw.read(4096)
                if not chunk:
                    break
                read += len(chunk)
        except Exception:  # noqa: BLE001 - best effort only
            pass

    def stream_json(self, text, resp, url, what, lines):
        """One streamed event's JSON, or a permanent 'malformed' ProviderError (closes resp)."""
        try:
            return json.loads(text)
        except ValueError:
            resp.close()
            raise self.malformed(
                f"Server sent a {what} from {url} that is not valid JSON: {text[:200]!r}",
                "\n".join(lines),
            ) from None

    def mid_answer_error(self, detail, raw):
        """The transient ProviderError for an error the server reports inside its answer."""
        return self.error(
            f"Server reported an error mid-answer: {str(detail)[:200]}",
            transient=True,
            kind="server",
            raw=raw[:10000],
        )

    def iter_lines(self, resp, url, cancel=None):
        """Decoded lines of a streamed body; checks cancel between lines, closes the response."""
        try:
            for line in resp.iter_lines(decode_unicode=False):
                if cancel is not None and cancel.is_set():
                    raise Cancelled()
                yield line.decode("utf-8", "replace")
        except requests.RequestException as exc:
            raise self.network_error(exc, url, self.timeout, mid_stream=True) from None
        finally:
            resp.close()

    # ---- error normalisation ---------------------------------------------------------------
    def network_error(self, exc, url, timeout, mid_stream=False):
        """A ProviderError for a failure below HTTP (refused, reset, timed out, dropped)."""
        text = str(exc)
        read_timeout = timeout[1] if isinstance(timeout, tuple) else timeout
        when = " mid-answer" if mid_stream else ""
        if isinstance(exc, requests.ConnectTimeout):
            msg = f"Timed out connecting to {url} (after {timeout[0]:g} s)"
            return self.error(msg, transient=True, kind="timeout")
        if isinstance(exc, requests.Timeout) or "timed out" in text.lower():
            msg = f"No answer from {url} within {read_timeout:g} s{when} (read timeout)"
            return self.error(msg, transient=True, kind="timeout")
        low = text.lower()
        if "refused" in low:
            reason = "connection refused (is the server running?)"
        elif "reset" in low:
            reason = "connection reset by the server"
        elif (
            "name or service not known" in low
            or "nodename nor servname" in low
            or "failed to resolve" in low
            or "getaddrinfo" in low
        ):
            reason = "host name not found"
        elif mid_stream or isinstance(exc, requests.exceptions.ChunkedEncodingError):
            reason = "the server closed the connection before the answer was complete"
        elif "remote end closed" in low or "aborted" in low:
            reason = "the server closed the connection without answering"
        else:
            reason = text.splitlines()[0][:ERROR_SNIPPET] if text else type(exc).__name__
        return self.error(
            f"Could not connect to {url}: {reason}"
            if not mid_stream
            else f"Connection to {url} failed{when}: {reason}",
            transient=True,
            kind="connection",
        )

    def http_error(self, status, reason, body, headers, url):
        """A ProviderError for an HTTP error status, classified transient or permanent."""
        try:
            phrase = reason or HTTPStatus(status).phrase
        except ValueError:
            phrase = ""
        detail = error_message_from_body(body or "") or "(empty body)"
        msg = f"Server answered {status} {phrase}: {detail}".replace(" :", ":")
        kw = {"status": status, "raw": (body or "")[:10000]}
        # 503 may carry Retry-After too (maintenance, overloaded); honour it on any status.
        retry = parse_retry_after((headers or {}).get("Retry-After"))
        if retry is not None:
            msg += f" (retry after {retry:.1f}".rstrip("0").rstrip(".") + " s)"
        if status == 429:
            return self.error(msg, transient=True, kind="rate_limit", retry_after=retry, **kw)
        if status == 404 or is_model_not_found(detail):
            return self.error(f"{msg} [{url}]", transient=False, kind="not_found", **kw)
        if status >= 500:
            return self.error(msg, transient=True, kind="server", retry_after=retry, **kw)
        if status in (408, 425):  # request timeout / too early: worth a retry
            return self.error(msg, transient=True, kind="timeout", **kw)
        return self.error(msg, transient=False, kind="client", **kw)


def _closed_without_answer(exc):
    """True when the server dropped the connection before sending any response byte."""
    text = str(exc).lower()
    return "remote end closed" in text or "connection aborted" in text


def check_cancel(cancel):
    """Raise Cancelled when the cancel event is set."""
    if cancel is not None and cancel.is_set():
        raise Cancelled()


def number(value):
    """A float from a JSON value, or None when it is missing or not a number."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def integer(value):
    """An int from a JSON value, or None."""
    num = number(value)
    return int(num) if num is not None else None


def estimate_from_stream(completion, chunks, first, end):
    """Fill what the server did not count: one content chunk is about one token; decode speed."""
    if completion.completion_tokens is None and chunks:
        completion.completion_tokens = chunks
        completion.tokens_estimated = True
    if completion.tokens_per_second is None and first is not None:
        stream_estimate(completion, first, end)


def stream_estimate(completion, first, end):
    """Decode speed from the stream: tokens after the first over the time after the first."""
    seconds = end - first
    tokens = completion.completion_tokens
    if not tokens or tokens < 2 or seconds <= 0:
        return
    completion.decode_ms = completion.decode_ms or seconds * 1000
    # The first token's time belongs to TTFT, so count the tokens that came after it.
    completion.tokens_per_second = (tokens - 1) / seconds
    completion.tps_source = "stream.estimate"
