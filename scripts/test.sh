#!/usr/bin/env bash
# The whole suite: lint, frontend unit tests, then pytest (unit, API, integration with a real Redis,
# Celery worker and HTTP servers on loopback, browser tests in headless Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "== installing Chromium for the browser tests (Debian package)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

echo "== lint"
make --no-print-directory lint
echo "== frontend unit tests"
(cd frontend && npm test --silent)
echo "== python tests"
export DJANGO_SETTINGS_MODULE=config.test_settings
exec .venv/bin/pytest "$@"
