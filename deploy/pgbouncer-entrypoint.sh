#!/bin/sh
# Writes PgBouncer's configuration with the database password of the environment, then runs it.
set -eu
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}"
dir=$(mktemp -d)
umask 077
# The password goes into both files as written; a double quote in it is doubled for the userlist's quoting.
escaped=$(printf '%s' "$POSTGRES_PASSWORD" | sed 's/"/""/g')
printf '"postgres" "%s"\n' "$escaped" > "$dir/userlist.txt"
sed -e "s|@POSTGRES_PASSWORD@|$(printf '%s' "$POSTGRES_PASSWORD" | sed 's/[|&\\]/\\&/g')|" \
  -e "s|@USERLIST@|$dir/userlist.txt|" /etc/pgbouncer/pgbouncer.ini.template > "$dir/pgbouncer.ini"
exec pgbouncer "$dir/pgbouncer.ini"
