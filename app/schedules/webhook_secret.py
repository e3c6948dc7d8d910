"""A template's webhook URL, kept encrypted on its row: the associated data that binds the
ciphertext to the row, and the URL read back. Apart from template_start.py (which creates
runs): the secrets masked in every command's output include this URL, and reading it should
not load a run's creation and scoring."""

from .. import crypto


def webhook_aad(template_id):
    """The webhook URL's associated data: its ciphertext belongs to this template's row."""
    return f"template:{template_id}:webhook"


def webhook_url(template):
    """The template's webhook URL in clear text (for sending only), or None."""
    if not template.webhook_url:
        return None
    return crypto.decrypt(template.webhook_url, webhook_aad(template.id))
