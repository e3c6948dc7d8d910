#!/bin/sh
# Container start: use the key the person gave (file or base64); otherwise keep one in the
# /data volume beside the database, created once with mode 0600.
set -e
if [ -z "$LLMBENCH_MASTER_KEY_PATH" ] && [ -z "$LLMBENCH_MASTER_KEY_BASE64" ]; then
  export LLMBENCH_MASTER_KEY_PATH=/data/master.key
  if [ ! -f "$LLMBENCH_MASTER_KEY_PATH" ]; then
    (umask 077 && python -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())' \
      > "$LLMBENCH_MASTER_KEY_PATH")
    echo "generated a new master key in $LLMBENCH_MASTER_KEY_PATH: back it up with the database" >&2
  fi
fi
# A PostgreSQL password kept in a (Docker secret) file: passed on in the environment only.
if [ -n "$LLMBENCH_DB_PASSWORD_FILE" ] && [ -z "$LLMBENCH_DB_PASSWORD" ]; then
  LLMBENCH_DB_PASSWORD="$(cat "$LLMBENCH_DB_PASSWORD_FILE")"
  export LLMBENCH_DB_PASSWORD
fi
# `worker ...` runs a `llmbench worker` (docker-compose.postgres.yml); anything else is serve's.
if [ "$1" = "worker" ]; then
  exec llmbench "$@"
fi
exec llmbench serve "$@"
