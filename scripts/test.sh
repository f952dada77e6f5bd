#!/usr/bin/env bash
# The whole suite: lint, frontend unit tests, then pytest (unit, API, integration with a real Redis,
# Celery worker and HTTP servers on loopback, browser tests in headless Chromium), then the
# database-touching tests a second time on PostgreSQL when it is installed.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "== installing Chromium for the browser tests (Debian package)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

echo "== lint"
make --no-print-directory lint
echo "== frontend unit tests"
(cd frontend && npm run typecheck --silent && npm test --silent)

export DJANGO_SETTINGS_MODULE=config.test_settings
echo "== python tests (SQLite)"
# The cluster test starts a PostgreSQL of its own: it runs once, in the PostgreSQL pass below.
.venv/bin/pytest -m "not e2e and not cluster" "$@"
# The browser tests run in a session of their own: Playwright's sync API leaves an event loop
# running in the main thread, which the engine's synchronous entry points must not inherit.
echo "== browser tests (headless Chromium)"
.venv/bin/pytest -m e2e "$@"

if ls -d /usr/lib/postgresql/*/bin >/dev/null 2>&1; then
  echo "== database tests again on PostgreSQL"
  pgdir=$(mktemp -d /tmp/studio-pg.XXXXXX)
  trap 'scripts/postgres.sh stop "$pgdir"; rm -rf "$pgdir"' EXIT
  port=$(.venv/bin/python -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
  DATABASE_URL=$(scripts/postgres.sh start "$pgdir" "$port") \
    .venv/bin/pytest -m "not e2e" tests/api tests/graphs/test_services.py tests/execution tests/integration \
      tests/reliability "$@"
else
  echo "== PostgreSQL is not installed: skipping the PostgreSQL pass (CI installs it)"
fi
