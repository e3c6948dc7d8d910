"""Security headers on every response: a Content-Security-Policy that fits our pages (scripts
and styles from our own static files only, no inline script, style or eval), no framing, no
content sniffing."""

# Pages: htmx and our JS are files under /static; meter widths are classes, not inline styles.
PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
# report.html and the chart SVGs are self-contained documents with their own <style> and no
# script at all: inline style is all they may use.
DOCUMENT_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)


def _is_document(response):
    """A chart SVG or an HTML file, downloaded or viewed (report.html)."""
    disposition = response.headers.get("Content-Disposition", "")
    return response.mimetype == "image/svg+xml" or (
        response.mimetype == "text/html" and disposition.startswith(("attachment", "inline"))
    )


def init_app(app):
    """Add the headers to every response (an error page's too)."""

    @app.after_request
    def _security_headers(response):
        headers = response.headers
        policy = DOCUMENT_POLICY if _is_document(response) else PAGE_POLICY
        headers.setdefault("Content-Security-Policy", policy)
        headers.setdefault("X-Frame-Options", "DENY")
        headers.setdefault("X-Content-Type-Options", "nosniff")
        headers.setdefault("Referrer-Policy", "same-origin")
        return response
