#!/usr/bin/env bash
# Start the whole studio on one machine: Redis (unless REDIS_URL points elsewhere), the mock
# model server, a Celery worker with the reaper, and the web server. Ctrl-C stops all of them.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
PORT=${PORT:-8000}
MOCK_PORT=${MOCK_PORT:-9010}
REDIS_PORT=${REDIS_PORT:-6390}
export DJANGO_DEBUG=${DJANGO_DEBUG:-1}
mkdir -p .run

pids=()
start() {  # name, command...: own process group so that stopping it stops its children too
  local name=$1; shift
  setsid "$@" >".run/$name.log" 2>&1 &
  pids+=($!)
  echo "  started $name (pid $!, log .run/$name.log)"
}
stop() {
  trap - INT TERM EXIT
  echo; echo "Stopping…"
  for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null; done
  wait 2>/dev/null
  exit 0
}
trap stop INT TERM EXIT

if [ -z "${REDIS_URL:-}" ]; then  # set REDIS_URL in the environment to use an existing Redis
  export REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
  start redis $PY -m execution.localredis --port "$REDIS_PORT"
fi
export MOCKMODELS_URL="http://127.0.0.1:$MOCK_PORT"
start mockmodels $PY manage.py mockmodels --port "$MOCK_PORT"
start worker .venv/bin/celery -A config.celery_app worker --beat --pool=threads --concurrency=8 --loglevel=INFO
start web $PY manage.py runserver --noreload "127.0.0.1:$PORT"

sleep 2
cat <<MSG

Inference Graph Studio is running:  http://127.0.0.1:$PORT/
  sign in as  demo / demo-studio
  API docs    http://127.0.0.1:$PORT/api/docs/
  mock models $MOCKMODELS_URL   Redis $REDIS_URL
Logs are in .run/. Press Ctrl-C to stop everything.
MSG
wait -n "${pids[@]}"
echo "A service stopped unexpectedly; see the logs in .run/."
stop
