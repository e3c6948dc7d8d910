"""Redactor: a secret is masked in every form a hostile server may send it back in.

Each test hands the Redactor one encoding of the key and checks that neither the key nor a
cut-short copy of it (its first 8 characters) survives, encoded or decoded.
"""

import base64
import json
import re

import pytest

from app.providers.redaction import MASK
from app.providers.redaction import Redactor
from app.schedules.known_secrets import BATCH
from app.schedules.known_secrets import mask_chunks

KEY = "sk-live-EVILSECRET7f0123456789"
REDACT = Redactor([f"Bearer {KEY}"])


def json_escaped(text):
    return "".join(f"\\u{ord(c):04x}" for c in text)


def clear(text):
    """Whether no trace of the key is left, in the text or in its hex."""
    return not any(
        trace in text
        for trace in (
            "EVILSECR",
            "sk-live-",
            KEY.encode().hex()[16:],
            KEY.encode().hex().upper()[16:],
        )
    )


def test_a_key_written_as_json_unicode_escapes_is_masked_and_the_json_still_parses():
    reply = '{"score": 50, "reason": "leaked ' + json_escaped(KEY) + '"}'
    masked = REDACT(reply)
    assert json.loads(masked) == {"score": 50, "reason": f"leaked {MASK}"}


def test_a_key_escaped_twice_inside_a_json_string_is_masked():
    reply = json.dumps({"content": '{"reason": "' + json_escaped(KEY) + '"}'})
    assert "\\\\u0045" in reply
    assert clear(json.loads(json.loads(REDACT(reply))["content"])["reason"])


@pytest.mark.parametrize(
    "encoded",
    [
        "".join(f"%{b:02X}" for b in KEY.encode()),
        "".join(f"%{b:02x}" for b in KEY.encode()),
        "".join(f"&#{ord(c)};" for c in KEY),
        "".join(f"&#x{ord(c):X};" for c in KEY),
        KEY.replace("-", "&#45;"),
        KEY.replace("-", "\\u002d"),
    ],
    ids=["url-upper", "url-lower", "html-decimal", "html-hex", "html-mixed", "json-mixed"],
)
def test_a_key_in_a_text_encoding_is_masked(encoded):
    # Masked whole (a key's body may be masked first, then what is left of it: two masks).
    assert re.fullmatch(r"before (\*\*\*\*)+ after", REDACT(f"before {encoded} after"))


@pytest.mark.parametrize("offset", [0, 1, 2])
def test_a_key_as_base64_inside_a_larger_blob_is_masked_at_each_alignment(offset):
    blob = b"x" * offset + b"some data before " + KEY.encode() + b" and after"
    for encoded in (base64.b64encode(blob), base64.urlsafe_b64encode(blob)):
        masked = REDACT(f"blob: {encoded.decode()} end")
        assert masked == f"blob: {MASK} end"


@pytest.mark.parametrize("encoded", [KEY.encode().hex(), KEY.encode().hex().upper()])
def test_a_key_as_hex_is_masked(encoded):
    assert REDACT(f"hex {encoded} end") == f"hex {MASK} end"


def test_a_key_cut_short_by_the_server_is_masked_as_far_as_it_goes():
    assert REDACT("key sk-live-EVILSECRET7f****6789 end") == f"key {MASK}{MASK}6789 end"


def test_a_plain_header_value_is_not_masked_by_its_first_characters():
    redact = Redactor(["https://my.site/app"])
    assert redact("see https://other.example") == "see https://other.example"


def test_text_without_a_secret_is_left_as_it_is():
    text = 'Fish & chips: 100% sure, "quoted" \\ backslash, \\u00e9t\\u00e9 and &amp; %41'
    assert REDACT(text) == text


def test_pieces_of_a_key_split_over_stream_events_are_masked_in_the_raw_text():
    pieces = ["my key is ", "sk-live", "-EVILSE", "CRET7f01", "23456789", " ok"]
    raw = "\n".join("data: " + json.dumps({"choices": [{"delta": {"content": p}}]}) for p in pieces)
    masked, found = REDACT.mask("".join(pieces))
    assert clear(masked) and found
    kept = REDACT.pieces(raw, found)
    assert not any(p in kept for p in pieces[1:5])
    assert '"my key is "' in kept and "pieces of a secret" in kept


@pytest.mark.parametrize("batch", [0, 16, BATCH])
def test_a_key_split_over_two_chunks_of_a_file_is_masked_whole(batch):
    chunks = ["row 1\nrow 2 sk-live-EVIL", "SECRET7f0123456789 end\n", "row 3"]
    masked = "".join(mask_chunks(chunks, REDACT, batch))
    assert masked == f"row 1\nrow 2 {MASK} end\nrow 3"


def test_a_live_stream_is_masked_a_line_at_a_time():
    chunks = iter(["event: 1\n", "event: 2\n"])
    masked = mask_chunks(chunks, REDACT, 0)
    assert next(masked) == "event: 1\n"  # not held back for a batch
