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
# The container listens on every address, so `serve` needs an account: with none given, the
# first admin's password is made once into the /data volume (account "admin"; read it there).
if [ "$1" != "worker" ] && [ -z "$LLMBENCH_ADMIN_PASSWORD" ] && [ -z "$LLMBENCH_ADMIN_PASSWORD_FILE" ] \
   && [ "$LLMBENCH_AUTH" != "off" ]; then
  export LLMBENCH_ADMIN_PASSWORD_FILE=/data/admin_password
  if [ ! -f "$LLMBENCH_ADMIN_PASSWORD_FILE" ]; then
    (umask 077 && python -c 'import secrets; print(secrets.token_urlsafe(18))' > "$LLMBENCH_ADMIN_PASSWORD_FILE")
    echo "the first admin account is 'admin'; its password is in $LLMBENCH_ADMIN_PASSWORD_FILE" >&2
  fi
fi
# `worker ...` runs a `llmbench worker` (docker-compose.postgres.yml); anything else is serve's.
if [ "$1" = "worker" ]; then
  exec llmbench "$@"
fi
exec llmbench serve "$@"
