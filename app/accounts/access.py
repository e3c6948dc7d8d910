"""When a login is needed, which addresses may vouch for a name, and how a server starts.

On loopback with no account nothing changes (local-first); once an account exists, or the
server listens beyond loopback, every page and API call needs a login. LLMBENCH_AUTH=off is
the explicit way to run open."""

import ipaddress
import logging
from pathlib import Path

from ..db.models import ROLES
from ..errors import LlmbenchError
from . import audit
from .roles import ADMIN
from .store import accounts_exist
from .store import add_account
from .store import any_account

log = logging.getLogger(__name__)
LOOPBACK_NAMES = ("localhost", "")


class StartRefused(LlmbenchError):
    status = 400


def is_loopback(host):
    """Whether `host` (the bound address) is reachable only from this machine."""
    host = str(host or "").strip().strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name, "0.0.0.0" is an address: anything else reaches further


def auth_off(config):
    return str(config.get("AUTH") or "").strip().lower() == "off"


def login_needed(config, fresh=False):
    """Whether requests must sign in: an account exists or the bind is beyond loopback, and
    LLMBENCH_AUTH is not off. `fresh`: look for accounts now (a request that changes things)."""
    if auth_off(config):
        return False
    return not is_loopback(config.get("HOST")) or accounts_exist(fresh)


def trusted_networks(text):
    """LLMBENCH_TRUSTED_PROXIES ("10.0.0.5, 10.1.0.0/16") as networks; a bad entry is named."""
    networks = []
    for part in str(text or "").split(","):
        part = part.strip()
        if not part:
            continue
        try:
            networks.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise StartRefused(
                f"LLMBENCH_TRUSTED_PROXIES: {part!r} is not an address or network"
            ) from None
    return networks


def is_trusted(address, networks):
    """Whether a request from `address` comes from one of the trusted proxies."""
    try:
        ip = ipaddress.ip_address(str(address or "").strip())
    except ValueError:
        return False
    return any(ip.version == net.version and ip in net for net in networks)


def _admin_password(config):
    password = config.get("ADMIN_PASSWORD")
    path = config.get("ADMIN_PASSWORD_FILE")
    if not password and path:
        try:
            password = Path(path).read_text(encoding="utf-8").strip("\r\n")
        except OSError as exc:
            raise StartRefused(
                f"LLMBENCH_ADMIN_PASSWORD_FILE ({path}) cannot be read ({exc.strerror})"
            ) from None
    return password or None


def prepare_start(config, host):
    """Check a server may start on `host` and make the first admin if the config gives one.

    Logs what it did (never the password); raises StartRefused when it listens beyond loopback
    with no account and neither LLMBENCH_AUTH=off nor a first admin password."""
    trusted_networks(config.get("TRUSTED_PROXIES"))  # a bad entry stops the start, named
    create = str(config.get("AUTH_PROXY_CREATE") or "").strip().lower()
    if create and create not in ROLES:
        raise StartRefused(
            f"LLMBENCH_AUTH_PROXY_CREATE: {create!r} is not a role; use one of {', '.join(ROLES)}"
        )
    password = _admin_password(config)
    if password and not any_account():
        add_account("admin", ADMIN, password)
        audit.record(audit.CLI, "account.add", "account admin", {"role": ADMIN, "by": "env"})
        log.info("Created the first admin account, 'admin', from LLMBENCH_ADMIN_PASSWORD.")
    if auth_off(config):
        log.warning("LLMBENCH_AUTH=off: no login; anyone who can reach %s can do anything.", host)
        return
    if not is_loopback(host) and not any_account():
        raise StartRefused(
            f"llmbench would listen on {host}, beyond this machine, and has no account to "
            "sign in with. Create one first: llmbench users add NAME --role admin "
            "(or set LLMBENCH_ADMIN_PASSWORD, or LLMBENCH_AUTH=off on a trusted network)."
        )
