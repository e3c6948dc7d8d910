# llmbench in one container: gunicorn (1 worker, 8 threads) + the one orchestrator thread.
FROM python:3.11-slim
WORKDIR /app
# The repo is copied, not a wheel: templates/ and static/ live beside app/ (editable install).
COPY . /app
RUN pip install --no-cache-dir -e . && mkdir -p /data
ENV LLMBENCH_HOST=0.0.0.0 \
    LLMBENCH_PORT=8080 \
    LLMBENCH_DB=/data/llmbench.db \
    LLMBENCH_MASTER_KEY_PATH=/data/master.key
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8080/api/status', timeout=4).status == 200 else 1)"
# The entrypoint creates the master key on first start if the volume has none.
CMD ["sh", "-c", "[ -f \"$LLMBENCH_MASTER_KEY_PATH\" ] || (umask 077 && python -c 'import base64,os;print(base64.b64encode(os.urandom(32)).decode())' > \"$LLMBENCH_MASTER_KEY_PATH\"); exec llmbench serve"]
