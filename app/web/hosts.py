"""The Host header values the server answers (DNS rebinding): loopback names, the address it is
bound to and LLMBENCH_ALLOWED_HOSTS; any other Host gets 400.

Checked here rather than with Flask's TRUSTED_HOSTS: werkzeug compares an IPv6 host such as
`[::1]:8080` by what comes before its first colon, so it could never allow one.
"""

import ipaddress

LOOPBACK = ("localhost", "127.0.0.1", "::1")
_ANY = ("0.0.0.0", "::", "")  # bound to every address: that names no host


def allowed_hosts(config):
    """The host names (no ports) requests may carry, or None for any ("*" in the setting)."""
    extra = config.get("ALLOWED_HOSTS") or ""
    if isinstance(extra, str):
        extra = extra.split(",")
    names = [name.strip().lower() for name in extra if name and name.strip()]
    if "*" in names:
        return None
    bound = str(config.get("HOST") or "").strip().lower()
    if bound not in _ANY:
        names.append(bound)
    hosts = []
    for name in (*LOOPBACK, *names):
        name = _bare(name)
        if name and name not in hosts:
            hosts.append(name)
    return hosts


def _bare(name):
    """A host without port or IPv6 brackets: '[::1]:8080' -> '::1', 'x.example:80' -> 'x...'."""
    if name.startswith("["):
        return name[1:].split("]", 1)[0]
    try:
        ipaddress.IPv6Address(name)
        return name
    except ValueError:
        return name.rsplit(":", 1)[0] if name.count(":") == 1 else name


def host_name(host):
    """The name part of a Host header value, lower case: '[::1]:8080' -> '::1'."""
    return _bare((host or "").strip().lower()).rstrip(".")
