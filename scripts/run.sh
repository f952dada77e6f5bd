#!/usr/bin/env bash
# Start the whole studio on one machine: Redis (unless REDIS_URL points elsewhere), the mock
# model server, Celery worker processes (one per core; the first also schedules the reaper) and
# the web server (gunicorn). Each runs under a small supervisor that restarts it when it exits,
# with a back-off of 1, 2, 4 … 30 s; one crashed service no longer stops the others. Ctrl-C (or
# SIGTERM) stops all of them.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
PORT=${PORT:-8000}
MOCK_PORT=${MOCK_PORT:-9010}
REDIS_PORT=${REDIS_PORT:-6390}
RUN_DIR=${RUN_DIR:-.run}  # logs and the pid of each service's current process
# gthread: every request, and every open event stream, holds one thread; a process serves at most
# RUN_SSE_MAX_STREAMS (48) streams, so 64 threads leave 16 for other requests.
WEB_WORKERS=${WEB_WORKERS:-2}
WEB_THREADS=${WEB_THREADS:-64}
# Connections the kernel queues while every thread is busy (runserver's 10 reset 47 of 100
# concurrent run creations); Linux caps it at net.core.somaxconn (4096 by default).
WEB_BACKLOG=${WEB_BACKLOG:-2048}
export DJANGO_DEBUG=${DJANGO_DEBUG:-1}
# Plain HTTP on loopback: no HTTPS redirect or HSTS even when DJANGO_DEBUG=0.
export DJANGO_SECURE_SSL_REDIRECT=${DJANGO_SECURE_SSL_REDIRECT:-0}
export DJANGO_HSTS_SECONDS=${DJANGO_HSTS_SECONDS:-0}
export DJANGO_SECURE_COOKIES=${DJANGO_SECURE_COOKIES:-0}
mkdir -p "$RUN_DIR"
# The demo data, seeded with the mock server's address: the `local` environment follows MOCK_PORT.
MOCKMODELS_URL="http://127.0.0.1:$MOCK_PORT" $PY manage.py seed_demo || exit 1

pids=()
supervise() {  # name, command...: run it in its own process group, and again whenever it exits
  local name=$1; shift
  : >"$RUN_DIR/$name.log"
  (
    child=0 sleeper=0
    halt() {  # never `kill 0`: that would signal this whole script's process group
      [ "$child" -gt 0 ] && kill -TERM -- "-$child" 2>/dev/null
      [ "$sleeper" -gt 0 ] && kill -TERM "$sleeper" 2>/dev/null
      wait 2>/dev/null
      exit 0
    }
    trap halt TERM
    delay=1
    while true; do
      started=$SECONDS
      setsid "$@" >>"$RUN_DIR/$name.log" 2>&1 &
      child=$!
      echo "$child" >"$RUN_DIR/$name.pid"
      wait "$child"
      code=$?
      # A service that ran for a minute crashed afresh: restart it at once, not after 30 s.
      [ $((SECONDS - started)) -ge 60 ] && delay=1
      echo "$(date +%T) $name stopped (exit $code); restarting it in ${delay} s (log $RUN_DIR/$name.log)"
      sleep "$delay" &
      sleeper=$!
      wait "$sleeper"
      delay=$((delay * 2 > 30 ? 30 : delay * 2))
    done
  ) &
  pids+=($!)
  echo "  started $name (log $RUN_DIR/$name.log, restarted if it stops)"
}
stop() {
  trap - INT TERM EXIT
  echo; echo "Stopping…"
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  wait 2>/dev/null
  exit 0
}
trap stop INT TERM EXIT

if [ -z "${REDIS_URL:-}" ]; then  # set REDIS_URL in the environment to use an existing Redis
  export REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
  supervise redis $PY -m execution.localredis --port "$REDIS_PORT"
fi
export MOCKMODELS_URL="http://127.0.0.1:$MOCK_PORT"
supervise mockmodels $PY manage.py mockmodels --port "$MOCK_PORT"
# Worker processes: one per core (WORKERS), each a threads pool of WORKER_THREADS runs. Runs are
# mostly waiting on their models, but the Python work of each run (the engine, its writes) holds
# its process's GIL: a process per core uses every core. The first one also runs the reaper's
# schedule (beat: exactly one per deployment).
WORKERS=${WORKERS:-$(nproc 2>/dev/null || echo 1)}
WORKER_THREADS=${WORKER_THREADS:-8}
[ "$WORKERS" -ge 1 ] 2>/dev/null || WORKERS=1
for i in $(seq 1 "$WORKERS"); do
  beat=()
  [ "$i" = 1 ] && beat=(--beat --schedule "$RUN_DIR/celerybeat-schedule")
  supervise "worker$i" .venv/bin/celery -A config.celery_app worker "${beat[@]}" --pool=threads \
    --concurrency="$WORKER_THREADS" --hostname="worker$i@%h" --loglevel=INFO
done
# Static files (the built frontend) come from whitenoise, as in production.
supervise web .venv/bin/gunicorn config.wsgi:application --bind "127.0.0.1:$PORT" \
  --worker-class gthread --workers "$WEB_WORKERS" --threads "$WEB_THREADS" --backlog "$WEB_BACKLOG" \
  --timeout 120 --graceful-timeout 5 --access-logfile -

sleep 2
cat <<MSG

Inference Graph Studio is running:  http://127.0.0.1:$PORT/
  sign in as  demo / demo-studio
  API docs    http://127.0.0.1:$PORT/api/docs/
  mock models $MOCKMODELS_URL   Redis $REDIS_URL
Logs are in $RUN_DIR/. A service that stops is restarted. Press Ctrl-C to stop everything.
MSG
wait
