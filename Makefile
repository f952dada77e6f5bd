# The project's vocabulary: `make run` starts the whole studio, `make test` runs the whole suite.
# Both set everything up first (virtualenv, Python and npm packages, frontend build, database).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
export DJANGO_SETTINGS_MODULE ?= config.settings

.PHONY: run test setup venv models-venv frontend lint bench fuzz reliability differential clean reset-demo

run: setup
	@PORT=$(PORT) MODELS=$(MODELS) bash scripts/run.sh

test: setup
	bash scripts/test.sh

# Deletes every row of db.sqlite3 (graphs, runs, users, environments) and seeds the demo again; a
# running studio is not stopped and shows the fresh demo at once. Refuses any other DATABASE_URL.
# The `local` environment points at MOCK_PORT (and the real models at MODELS_PORT), as in `make run`.
reset-demo: setup
	DJANGO_DEBUG=$${DJANGO_DEBUG:-1} MOCKMODELS_URL="http://127.0.0.1:$${MOCK_PORT:-9010}" \
	LOCAL_MODELS_URL="$$( [ "$(MODELS)" != 0 ] && [ -x $(MODELS_VENV)/bin/python ] && echo http://127.0.0.1:$${MODELS_PORT:-9020} )" \
	$(PY) manage.py reset_demo

setup: venv models-venv frontend .env
	@DJANGO_DEBUG=$${DJANGO_DEBUG:-1} $(PY) manage.py migrate --noinput -v 0

.env:
	cp .env.example .env

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

# The demo's model server (models/, KServe's ModelServer with OpenCV and scikit-image) lives in a
# virtualenv of its own, as it would in a cluster: about 810 MB (3.5 min with an empty pip cache).
# MODELS=0 skips it (make run then sends every demo step to the mock model server).
MODELS ?= 1
MODELS_VENV := .venv-models
ifeq ($(MODELS),0)
models-venv:
	@echo "MODELS=0: not building $(MODELS_VENV) (the demo runs on the mock model server)"
else
models-venv: $(MODELS_VENV)/.installed
endif

$(MODELS_VENV)/.installed: models/requirements.txt
	test -x $(MODELS_VENV)/bin/python || $(PYTHON) -m venv $(MODELS_VENV)
	$(MODELS_VENV)/bin/python -m pip install -q --upgrade pip
	$(MODELS_VENV)/bin/python -m pip install -q -r models/requirements.txt
	touch $@

frontend: frontend/dist/.built

frontend/node_modules/.installed: frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The API types follow the server's serializers and schema hooks (scripts/api_types.sh).
frontend/src/generated/api.ts: $(VENV)/.installed frontend/node_modules/.installed .env scripts/api_types.sh $(shell find config graphs execution -name '*.py' -not -path '*/migrations/*' 2>/dev/null)
	bash scripts/api_types.sh

# The run event types follow their one declaration (stdlib only: any python3 will do).
frontend/src/generated/events.ts: execution/eventschema.py execution/eventfields.py scripts/export_event_types.py
	$(PYTHON) scripts/export_event_types.py

frontend/dist/.built: frontend/node_modules/.installed frontend/src/generated/api.ts frontend/src/generated/events.ts $(shell find frontend/src frontend/scripts frontend/vite.config.* frontend/tsconfig*.json -type f 2>/dev/null)
	cd frontend && npm run build --silent
	touch $@

lint: venv frontend/node_modules/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy .
	$(VENV)/bin/lint-imports
	env -u DJANGO_SETTINGS_MODULE $(PY) -c "import sys, graphs.language, execution.engine, execution.casecore, deploys.gitops; assert not {'django','rest_framework','celery'} & set(sys.modules), 'a core imports Django'"
	cd frontend && npm run --silent lint
	bash scripts/api_types.sh --check
	$(PYTHON) scripts/export_event_types.py --check
	$(PYTHON) scripts/check_file_sizes.py

bench: setup
	$(PY) bench/run_all.py

# The long variants of the reliability suites (CI runs the short ones inside `make test`).
fuzz: setup
	FUZZ_EXAMPLES=1000 DJANGO_SETTINGS_MODULE=config.test_settings $(VENV)/bin/pytest tests/fuzz -q

reliability: setup
	DJANGO_SETTINGS_MODULE=config.test_settings $(PY) bench/reliability.py

# The engine against KServe's own router (../shared/oracle), as every release in turn (RELEASE=v0.13.1
# for one): prints the divergence tables and writes one replayable example per class to
# test-artifacts/differential (<release>/ below it for the older ones). DIFF_REQUESTS=20000 for a long run.
differential: venv
	DJANGO_SETTINGS_MODULE=config.test_settings $(PY) -m tests.engine.differential --release $(or $(RELEASE),all) $(if $(SEED),--seed $(SEED))

clean:
	rm -rf $(VENV) frontend/node_modules frontend/dist staticfiles
