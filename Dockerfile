# llmbench in one container: gunicorn (1 worker, 8 threads) + the one orchestrator thread.
FROM python:3.11-slim
WORKDIR /app
# The repo is copied, not a wheel: templates/ and static/ live beside app/ (editable install).
COPY . /app
# Runs as root so a bind-mounted ./data (created by Docker as root) is writable on first start.
# With the PostgreSQL driver, so LLMBENCH_DB may be postgresql://… (docker-compose.postgres.yml).
RUN pip install --no-cache-dir -e ".[postgres]" && mkdir -p /data
# Bound to every address inside the container, so the Host names it answers are listed:
# loopback is always allowed; add the names you open it by (LLMBENCH_ALLOWED_HOSTS).
ENV LLMBENCH_HOST=0.0.0.0 \
    LLMBENCH_PORT=8080 \
    LLMBENCH_DB=/data/llmbench.db \
    LLMBENCH_ALLOWED_HOSTS=localhost,127.0.0.1
VOLUME /data
EXPOSE 8080
# /api/status answers without a login (with {"status": "ok"} only).
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD python -c "import os, sys, urllib.request; port = os.environ.get('LLMBENCH_PORT', '8080'); sys.exit(0 if urllib.request.urlopen(f'http://127.0.0.1:{port}/api/status', timeout=4).status == 200 else 1)"
# Uses LLMBENCH_MASTER_KEY_PATH or _BASE64 when given, else /data/master.key (created once).
ENTRYPOINT ["/app/docker/entrypoint.sh"]
