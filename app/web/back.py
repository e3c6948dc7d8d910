"""Where a form goes back to: only a path on this site (never another host)."""


def local_path(url):
    """`url` when it is a path on this site (a form's `next`), else None."""
    if url and url.startswith("/") and not url.startswith("//") and "\\" not in url:
        return url
    return None
