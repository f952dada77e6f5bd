#!/usr/bin/env bash
# Start a throwaway PostgreSQL cluster on a loopback port for the test suite's second pass and
# print its DATABASE_URL. Usage: scripts/postgres.sh start DIR PORT | scripts/postgres.sh stop DIR [MODE]
# | scripts/postgres.sh resume DIR PORT. An outage test stops it with MODE fast (its commits kept:
# the default, immediate, drops the last ones, written asynchronously) and resumes it on its data.
set -euo pipefail
action=$1 dir=$2
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] || { echo "PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }
as_owner() {  # PostgreSQL refuses to run as root
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
start_server() {  # port: start the cluster in $dir/data
  # Durability off: a test database is thrown away; this makes it several times faster.
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -o \
    "-p $1 -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" start >/dev/null
}
case $action in
  start)
    port=$3
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    as_owner "$bin/initdb" -D "$dir/data" -A trust -U studio >/dev/null
    start_server "$port"
    as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U studio studio
    echo "postgres://studio@127.0.0.1:$port/studio"
    ;;
  resume)
    start_server "$3"
    echo "postgres://studio@127.0.0.1:$3/studio"
    ;;
  stop)
    as_owner "$bin/pg_ctl" -D "$dir/data" -m "${3:-immediate}" stop >/dev/null 2>&1 || true
    ;;
esac
