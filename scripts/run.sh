#!/usr/bin/env bash
# Start the whole studio on one machine: Redis (unless REDIS_URL points elsewhere), the mock
# model server, the demo's real models on KServe's model server (models/server.py, in its own
# virtualenv .venv-models; MODELS=0 or no such virtualenv: the mock answers for them), Celery worker processes (one per core), the Celery beat scheduler (one: it sends
# the reaper's pass every RUN_REAPER_SECONDS) and the web server (gunicorn). Each runs in a process
# group of its own under a small supervisor that restarts it when it exits, with a back-off of
# 1, 2, 4 … 30 s; one crashed service no longer stops the others. Nothing outlives what started
# it: a service that dies takes its whole process group with it (a process it forked cannot live
# on beside its successor); a service whose supervisor dies is stopped by the kernel (setpriv
# --pdeathsig); a supervisor whose script dies (even by SIGKILL) stops its service within a
# second. Ctrl-C (or SIGTERM, SIGHUP) stops all of them: SIGTERM first, SIGKILL after
# STOP_SECONDS.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
PORT=${PORT:-8000}
MOCK_PORT=${MOCK_PORT:-9010}
MODELS_PORT=${MODELS_PORT:-9020}
MODELS=${MODELS:-1}
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
# The real models, when their virtualenv is there: the `local` environment maps the services they
# serve to MODELS_PORT (LOCAL_MODELS_URL), every other one to the mock server.
if [ "$MODELS" != 0 ] && [ -x .venv-models/bin/python ]; then
  export LOCAL_MODELS_URL="http://127.0.0.1:$MODELS_PORT"
else
  [ "$MODELS" != 0 ] && echo "No .venv-models (make models-venv): the demo's models are the mock server's."
  export LOCAL_MODELS_URL=
fi
# The demo data, seeded with the mock server's address: the `local` environment follows MOCK_PORT
# (and MODELS_PORT).
MOCKMODELS_URL="http://127.0.0.1:$MOCK_PORT" $PY manage.py seed_demo || exit 1
# A bare Git repository on this machine and the demo's deploy target for it (file://, allowed in
# DEPLOY_FILE_ROOTS for the services started here).
export DEPLOY_FILE_ROOTS=${DEPLOY_FILE_ROOTS:-$(cd "$RUN_DIR" && pwd)/git}
$PY manage.py seed_deploy_demo "$RUN_DIR/git" || exit 1

STOP_SECONDS=${STOP_SECONDS:-10}  # a service still running this long after SIGTERM gets SIGKILL
main=$$
# The kernel sends SIGTERM to a service whose supervisor dies (util-linux's setpriv; without it, a
# supervisor killed by SIGKILL leaves its service running).
deathsig=()
command -v setpriv >/dev/null 2>&1 && setpriv --pdeathsig TERM true 2>/dev/null && deathsig=(setpriv --pdeathsig TERM --)

pids=()
names=()
supervise() {  # name, command...: run it in its own process group, and again whenever it exits
  local name=$1; shift
  : >"$RUN_DIR/$name.log"
  (
    child=0 sleeper=0
    trap - INT TERM HUP EXIT  # the script's own traps are not this subshell's
    end_group() {  # every process of the service's group: SIGTERM, then SIGKILL after STOP_SECONDS
      [ "$child" -gt 0 ] || return 0
      kill -TERM -- "-$child" 2>/dev/null || return 0
      local waited=0
      while kill -0 -- "-$child" 2>/dev/null && [ "$waited" -lt $((STOP_SECONDS * 10)) ]; do
        sleep 0.1; waited=$((waited + 1))
      done
      kill -KILL -- "-$child" 2>/dev/null
      return 0
    }
    script_alive() {  # is this supervisor's parent still the script? A dead script's children are
      # re-parented the moment it dies, before anyone reaps it (kill -0 would still find a zombie).
      local stat
      if read -r stat 2>/dev/null <"/proc/$BASHPID/stat"; then
        stat=${stat##*") "}
        set -- $stat
        [ "$2" = "$main" ]
      else  # no /proc: the script's pid
        kill -0 "$main" 2>/dev/null
      fi
    }
    halt() {  # never `kill 0`: that would signal this whole script's process group
      [ "$sleeper" -gt 0 ] && kill -TERM "$sleeper" 2>/dev/null
      end_group
      wait 2>/dev/null
      rm -f "$RUN_DIR/$name.pid"
      exit 0
    }
    trap halt TERM INT HUP
    delay=1
    while true; do
      script_alive || halt
      started=$SECONDS
      setsid "${deathsig[@]}" "$@" >>"$RUN_DIR/$name.log" 2>&1 &
      child=$!
      echo "$child" >"$RUN_DIR/$name.pid"
      # Wait for the service, and look every second whether the script is still there: a script
      # killed by SIGKILL runs no trap, so its supervisors must notice on their own.
      while kill -0 "$child" 2>/dev/null; do
        script_alive || halt
        sleep 1 &
        sleeper=$!
        wait "$sleeper"
      done
      wait "$child"
      code=$?
      # Whatever the service left in its group (a forked helper, a gunicorn worker whose master
      # was killed) goes with it: nothing runs on beside the service started next.
      end_group
      child=0
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
  names+=("$name")
  echo "  started $name (log $RUN_DIR/$name.log, restarted if it stops)"
}
stop() {
  trap - INT TERM HUP EXIT
  echo; echo "Stopping…"
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  wait 2>/dev/null
  exit "${1:-0}"
}
trap stop INT TERM HUP EXIT

if [ -z "${REDIS_URL:-}" ]; then  # set REDIS_URL in the environment to use an existing Redis
  export REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
  supervise redis $PY -m execution.devtools.localredis --port "$REDIS_PORT"
fi
export MOCKMODELS_URL="http://127.0.0.1:$MOCK_PORT"
supervise mockmodels $PY manage.py mockmodels --port "$MOCK_PORT"
if [ -n "$LOCAL_MODELS_URL" ]; then
  supervise models .venv-models/bin/python -m models.server --host 127.0.0.1 --http_port "$MODELS_PORT"
fi
# Worker processes: one per core (WORKERS), each a threads pool of WORKER_THREADS runs. Runs are
# mostly waiting on their models, but the Python work of each run (the engine, its writes) holds
# its process's GIL: a process per core uses every core.
WORKERS=${WORKERS:-$(nproc 2>/dev/null || echo 1)}
WORKER_THREADS=${WORKER_THREADS:-8}
[ "$WORKERS" -ge 1 ] 2>/dev/null || WORKERS=1
for i in $(seq 1 "$WORKERS"); do
  supervise "worker$i" .venv/bin/celery -A config.celery_app worker --pool=threads \
    --concurrency="$WORKER_THREADS" --hostname="worker$i@%h" --loglevel=INFO
done
# The scheduler: exactly one per deployment, a service of its own rather than `-B` inside a worker
# (whose beat process outlived a killed worker, beside the new worker's own). Its pidfile refuses a
# second beat on this run folder; the scheduler's lock in Redis (config/beat.py) keeps any
# other beat on the same Redis idle.
supervise beat .venv/bin/celery -A config.celery_app beat --loglevel=INFO \
  --schedule "$RUN_DIR/celerybeat-schedule" --pidfile "$RUN_DIR/celerybeat.pid"
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
  real models ${LOCAL_MODELS_URL:-off (MODELS=0 or no .venv-models)}
Logs are in $RUN_DIR/. A service that stops is restarted. Press Ctrl-C to stop everything.
MSG
# A supervisor ends only when told to; one that died (killed) took its service with it, and the
# studio would run without that service unnoticed: stop everything instead, and say so (bash 5.1+;
# an older bash just waits).
if [ "${BASH_VERSINFO[0]}" -gt 5 ] || { [ "${BASH_VERSINFO[0]}" -eq 5 ] && [ "${BASH_VERSINFO[1]}" -ge 1 ]; }; then
  while true; do
    ended=
    wait -n -p ended "${pids[@]}"
    for i in "${!pids[@]}"; do
      if [ "${pids[$i]}" = "$ended" ]; then
        echo "$(date +%T) the supervisor of ${names[$i]} died; stopping everything"
        stop 1
      fi
    done
  done
fi
wait
