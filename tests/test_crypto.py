"""Secrets at rest: AES-256-GCM round trip, AAD binding, masking, master key sources."""

import base64
import logging
import os
import stat

import pytest

from app import crypto
from app.catalog.providers import create_provider
from app.catalog.providers import header_rows
from app.catalog.providers import provider_config
from app.db.models import ProviderHeader
from tests.conftest import TEST_KEY_B64

OTHER_KEY = base64.b64encode(b"o" * 32).decode()


@pytest.fixture
def keyed():
    """The process-wide key set to the test key, restored afterwards."""
    saved = crypto._key
    crypto.set_key(base64.b64decode(TEST_KEY_B64))
    yield
    crypto.set_key(saved)


def test_encrypt_then_decrypt_returns_the_plaintext(keyed):
    token = crypto.encrypt("Bearer s3cret", "provider:1:header:Authorization")
    assert crypto.decrypt(token, "provider:1:header:Authorization") == "Bearer s3cret"


def test_ciphertext_does_not_contain_the_plaintext(keyed):
    token = crypto.encrypt("Bearer s3cret", "aad")
    assert "s3cret" not in token
    assert "s3cret" not in base64.b64decode(token).decode("latin-1")


def test_each_encryption_uses_a_fresh_nonce(keyed):
    assert crypto.encrypt("same", "aad") != crypto.encrypt("same", "aad")


def test_decrypting_with_another_aad_fails(keyed):
    token = crypto.encrypt("Bearer s3cret", "provider:1:header:Authorization")
    with pytest.raises(crypto.KeyError_, match="re-enter the secret"):
        crypto.decrypt(token, "provider:2:header:Authorization")


def test_decrypting_with_another_key_fails(keyed):
    token = crypto.encrypt("Bearer s3cret", "aad")
    crypto.set_key(base64.b64decode(OTHER_KEY))
    with pytest.raises(crypto.KeyError_, match="master key differs"):
        crypto.decrypt(token, "aad")


def _secret_provider(name, value):
    return create_provider(
        {
            "name": name,
            "type": "OPENAI",
            "baseUrl": "http://127.0.0.1:9",
            "headers": [{"key": "Authorization", "value": value, "isSecret": True}],
        }
    )


def test_a_secret_moved_to_another_provider_row_cannot_be_decrypted(app):
    one = _secret_provider("one", "Bearer one-secret")
    two = _secret_provider("two", "Bearer two-secret")
    stolen = ProviderHeader.get(ProviderHeader.provider == one.id).value
    ProviderHeader.update(value=stolen).where(ProviderHeader.provider == two.id).execute()
    with pytest.raises(crypto.KeyError_):
        provider_config(two)
    assert provider_config(one).headers["Authorization"] == "Bearer one-secret"


def test_an_undecryptable_secret_is_listed_masked_not_crashing(app):
    one = _secret_provider("one", "Bearer one-secret")
    two = _secret_provider("two", "Bearer two-secret")
    stolen = ProviderHeader.get(ProviderHeader.provider == one.id).value
    ProviderHeader.update(value=stolen).where(ProviderHeader.provider == two.id).execute()
    rows = header_rows(two)
    assert rows[0]["valueMasked"] == "****" and rows[0]["readable"] is False


@pytest.mark.parametrize(
    ("value", "masked"),
    [
        ("Bearer sk-abcd1234", "****1234"),
        ("abcd", "****"),
        ("ab", "****"),
        ("", ""),
        (None, ""),
    ],
)
def test_mask_shows_only_the_last_four_characters(value, masked):
    assert crypto.mask(value) == masked


def test_missing_key_is_generated_once_with_mode_0600_and_a_warning(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="app.crypto")
    key = crypto.load_key(instance_path=tmp_path)
    path = tmp_path / "master.key"
    assert len(key) == 32
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "master.key" in warnings[0].getMessage()
    assert crypto.fingerprint(key) in caplog.text
    assert base64.b64encode(key).decode() not in caplog.text


def test_a_generated_key_is_reused_on_the_next_start(tmp_path, caplog):
    first = crypto.load_key(instance_path=tmp_path)
    caplog.clear()
    caplog.set_level(logging.INFO, logger="app.crypto")
    assert crypto.load_key(instance_path=tmp_path) == first
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_key_from_base64_setting():
    assert crypto.load_key(key_base64=OTHER_KEY) == b"o" * 32


def test_key_from_file_wins_over_base64(tmp_path):
    path = tmp_path / "k"
    path.write_text(TEST_KEY_B64 + "\n")
    assert crypto.load_key(key_path=str(path), key_base64=OTHER_KEY) == b"k" * 32


@pytest.mark.parametrize("bad", ["short", base64.b64encode(b"x" * 16).decode(), "not base64!!"])
def test_a_bad_key_says_how_to_make_a_good_one(bad):
    with pytest.raises(crypto.KeyError_) as info:
        crypto.load_key(key_base64=bad)
    message = info.value.message
    assert "32 bytes" in message and "head -c 32 /dev/urandom | base64" in message


def test_a_bad_key_file_is_named_in_the_message(tmp_path):
    path = tmp_path / "broken.key"
    path.write_text("nope")
    with pytest.raises(crypto.KeyError_, match="broken.key"):
        crypto.load_key(key_path=str(path))


def test_a_missing_key_file_names_the_setting_and_the_fix(tmp_path):
    from app.crypto import KeyError_
    from app.crypto import load_key

    with pytest.raises(KeyError_, match="LLMBENCH_MASTER_KEY_PATH .* cannot be read"):
        load_key(key_path=str(tmp_path / "nope.key"))
