"""Settings from the environment (12-factor). Defaults are the embedded one-machine setup:
SQLite in the project folder and a Redis on loopback. Production sets DJANGO_DEBUG=0 and a secret."""

import re
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DJANGO_DEBUG", default=False)
SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "Set the DJANGO_SECRET_KEY environment variable (required when DJANGO_DEBUG is off)."
        )
    # A development-only key: never used with DEBUG off, where the variable is required.
    SECRET_KEY = "dev-only-insecure-key-do-not-deploy"
# Fernet keys (comma-separated) that encrypt secrets kept in the database, deploy targets' Git
# credentials (config/secretbox.py): the first encrypts, all decrypt (rotation: put the new key
# first, run `manage.py rotate_secrets`, then drop the old one). Empty: one key derived from
# SECRET_KEY, so changing SECRET_KEY then needs the old derived key listed here first.
STUDIO_ENCRYPTION_KEYS = env.list("STUDIO_ENCRYPTION_KEYS", default=[])

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    # Swagger UI and ReDoc from our own static files: the API docs work offline and stay pinned.
    "drf_spectacular_sidecar",
    "graphs",
    "execution",
    "deploys",
]

MIDDLEWARE = [
    # First: /healthz and /readyz answer before host validation, the HTTPS redirect, sessions and
    # login (Kubernetes probes send the pod's IP as Host and speak plain HTTP; config/health.py).
    "config.health.HealthCheckMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "config.middleware.RequestSizeLimitMiddleware",
    "config.middleware.UnstorableRequestMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several processes (web, worker) share one file: wait for the lock instead of failing at once,
    # and take the write lock at BEGIN so select_for_update-style sections serialise. The wait is
    # the brief retry before an API answers 503 (config/exceptions.py); 10 s stays well under a
    # worker's RUN_HEARTBEAT_TIMEOUT (20 s), so a worker waiting on the lock is not taken for dead.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": env.float("STUDIO_SQLITE_TIMEOUT", default=10.0),
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL;",
        }
    )
DATABASES["default"].setdefault("ATOMIC_REQUESTS", False)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "frontend" / "dist"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = True

# Request body caps: manifests are small (a few KB); 2 MiB leaves room for large payloads of test
# runs. Anything bigger is refused with 413 naming the limit and its setting (config/middleware.py).
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("STUDIO_MAX_REQUEST_BYTES", default=2 * 1024 * 1024)
STUDIO_MAX_MANIFEST_BYTES = env.int("STUDIO_MAX_MANIFEST_BYTES", default=2 * 1024 * 1024)
# Documents per import request: 100 covers exporting a namespace's graphs with kubectl; a bigger
# stream is split by the client (each document is committed on its own, graphs/imports.py).
STUDIO_MAX_IMPORT_DOCUMENTS = env.int("STUDIO_MAX_IMPORT_DOCUMENTS", default=100)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Personal API tokens (hashed, shown once) and DRF authtoken keys: config/auth.py. First, so
        # that a refused or missing key answers 401 with "WWW-Authenticate: Token" (DRF takes the
        # header from the first class; the session's has none, which would make it a 403).
        "config.auth.PersonalTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "config.exceptions.exception_handler",
    "DEFAULT_PARSER_CLASSES": ["config.parsers.StrictJSONParser"],
    # ?format= is ours (export format), not DRF's renderer override.
    "URL_FORMAT_OVERRIDE": None,
    "DEFAULT_THROTTLE_RATES": {"login": env.str("STUDIO_LOGIN_RATE", default="10/min")},
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Inference Graph Studio API",
    "DESCRIPTION": "Versioned KServe InferenceGraphs: store, diff, export, validate and test-run them. "
    "Scripts authenticate with `Authorization: Token <key>`: create a key on the API tokens page "
    "(`/tokens/`, linked from the header) or with `POST /api/tokens/`.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "config.openapi.postprocess"],
    # Named after what they are rather than after the field ("type" would give TypeEnum; runs and
    # suite runs both have a "status", each with its own values, a run's keeping StatusEnum).
    "ENUM_NAME_OVERRIDES": {
        "RunEventTypeEnum": "execution.eventschema.RUN_EVENT_TYPES",
        "SuiteEventTypeEnum": "execution.eventschema.SUITE_EVENTS.names",
        "StatusEnum": "execution.models.Run.Status",
        "SuiteRunStatusEnum": "execution.suites.models.SuiteRun.Status",
        "LoadEventTypeEnum": "execution.eventschema.LOAD_EVENTS.names",
        "LoadTestStatusEnum": "execution.loadtests.models.LoadTest.Status",
    },
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

REDIS_URL = env.str("REDIS_URL", default="redis://127.0.0.1:6390/0")
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=REDIS_URL)
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A worker thread keeps its database connection across tasks, closed every this many tasks of the
# process, instead of one connection per run (Celery's default closes it before and after every
# task): a PostgreSQL connection is a new server process, milliseconds of CPU on both sides.
CELERY_DB_REUSE_MAX = env.int("CELERY_DB_REUSE_MAX", default=200)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A worker that lost the broker tries again every second (config/celery_app.py's Consumer; Celery
# waits up to 30 s between attempts), and for as long as it takes: None, not Celery's 100
# attempts, after which an unsupervised worker (the compose file's) exits and stays down.
CELERY_WORKER_CONSUMER = "config.celery_app:Consumer"
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
# Visibility timeout: a task not acked within this many seconds is redelivered to another worker.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=600)}
# A file the worker's consumer touches every 10 s while it takes tasks (config/worker_liveness.py),
# for a liveness probe that costs a stat. Empty (off) by default: `make run` supervises its own
# workers; deploy/kubernetes sets /tmp/studio-worker-alive.
WORKER_ALIVE_FILE = env.str("STUDIO_WORKER_ALIVE_FILE", default="")

if not DEBUG:
    # HTTPS by default, as cookiecutter-django's production settings: behind a TLS-terminating
    # proxy that sets X-Forwarded-Proto. A plain-HTTP deployment (docker-compose.yml on localhost)
    # turns each one off by its variable.
    SESSION_COOKIE_SECURE = env.bool("DJANGO_SECURE_COOKIES", default=True)
    CSRF_COOKIE_SECURE = env.bool("DJANGO_SECURE_COOKIES", default=True)
    SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
    # 60 s: cookiecutter-django's first value, so a mistake costs a minute; raise it (to a year,
    # 31536000, for preload lists) once every subdomain is known to serve HTTPS.
    SECURE_HSTS_SECONDS = env.int("DJANGO_HSTS_SECONDS", default=60)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env.bool("DJANGO_HSTS_PRELOAD", default=True)
    if env.bool("DJANGO_SECURE_PROXY_SSL_HEADER", default=True):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("DJANGO_LOG_LEVEL", default="WARNING")},
}

# Seconds /readyz waits for the database and for Redis (checked at once, so the whole answer takes
# at most this long): 2 s is libpq's smallest sensible connect timeout and stays under a probe's
# timeoutSeconds (3 in deploy/kubernetes), so the probe sees our 503 rather than its own timeout.
HEALTH_CHECK_TIMEOUT = env.float("STUDIO_HEALTH_CHECK_TIMEOUT", default=2.0)

CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}
LOGIN_MAX_FAILURES = env.int("STUDIO_LOGIN_MAX_FAILURES", default=5)
LOGIN_FAILURE_WINDOW = env.int("STUDIO_LOGIN_FAILURE_WINDOW", default=300)

# ---------------------------------------------------------------------------------------------
# Test runs (the execution app). Seconds unless named otherwise.
# ---------------------------------------------------------------------------------------------
MOCKMODELS_URL = env.str("MOCKMODELS_URL", default="http://127.0.0.1:9010")
# The demo's real models (models/server.py, KServe's model server) when `make run` starts them: the
# `local` environment maps the services they serve there. Empty: every demo step goes to the mock.
LOCAL_MODELS_URL = env.str("LOCAL_MODELS_URL", default="")
RUN_EVENTS_REDIS_URL = env.str("RUN_EVENTS_REDIS_URL", default=REDIS_URL)  # pub/sub fan-out + secret headers
RUN_MAX_DEADLINE = env.float("RUN_MAX_DEADLINE", default=300.0)  # the most an environment may allow
# How long past a run's deadline a worker waits before it gives up on the run.
RUN_DEADLINE_GRACE = env.float("RUN_DEADLINE_GRACE", default=10.0)
RUN_HEARTBEAT_SECONDS = env.float("RUN_HEARTBEAT_SECONDS", default=2.0)
# A finished run's trace goes to OTLP/HTTP only when OTEL_EXPORTER_OTLP_ENDPOINT (or
# OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; one export may take this long (connect, send and the
# SDK's retries together), on a thread of its own, never the run's.
TRACE_EXPORT_TIMEOUT = env.float("TRACE_EXPORT_TIMEOUT", default=5.0)
RUN_HEARTBEAT_TIMEOUT = env.float("RUN_HEARTBEAT_TIMEOUT", default=20.0)  # silent this long: the worker died
# Queued this long: the message was lost some other way than the ones known at once (a refused send,
# a broker restart: those are sent again within seconds, execution/services/reaper.py), or no
# worker runs; re-sent once, then failed. Long, so that a run waiting behind busy workers is not
# failed.
RUN_QUEUED_TIMEOUT = env.float("RUN_QUEUED_TIMEOUT", default=300.0)
# Queued this long while the broker holds no message waiting (so the run is behind no other): the
# worker that took its message stopped before claiming it, and the broker would give the message
# back only after CELERY_VISIBILITY_TIMEOUT (600 s). Sent again then, not counted as a re-send.
# 30 s: past most of a claim's own retries on a busy database (1, 2, 4 ... s); a duplicate costs
# nothing anyway (only a queued run can be claimed).
RUN_QUEUED_RESEND_SECONDS = env.float("RUN_QUEUED_RESEND_SECONDS", default=30.0)
RUN_MAX_ATTEMPTS = env.int("RUN_MAX_ATTEMPTS", default=2)
# Test connection (GET /api/environments/{id}/probe/): each service's readiness and metadata calls
# together within PROBE_TIMEOUT (2 s: a model server that is up answers its status in
# milliseconds, and the person waits at a button), PROBE_CONCURRENCY services at a time (4: a
# request thread holds that many sockets, and a big service map should not stampede a cluster),
# all of them within PROBE_TOTAL_TIMEOUT (10 s: the button answers even for 50 dead services;
# those not reached are reported as timed out), each answer at most PROBE_MAX_RESPONSE_BYTES
# (64 KiB: metadata of a model with hundreds of tensors).
PROBE_TIMEOUT = env.float("PROBE_TIMEOUT", default=2.0)
PROBE_CONCURRENCY = env.int("PROBE_CONCURRENCY", default=4)
PROBE_TOTAL_TIMEOUT = env.float("PROBE_TOTAL_TIMEOUT", default=10.0)
PROBE_MAX_RESPONSE_BYTES = env.int("PROBE_MAX_RESPONSE_BYTES", default=64 * 1024)
RUN_SECRET_HEADERS_TTL = env.int("RUN_SECRET_HEADERS_TTL", default=3600)
RUN_BODY_CAP = env.int("RUN_BODY_CAP", default=64 * 1024)  # bytes of each body kept in runs and traces
RUN_MAX_RESPONSE_BYTES = env.int("RUN_MAX_RESPONSE_BYTES", default=10 * 1024 * 1024)
# All response bodies of one test run together (a wide Ensemble holds every member's body at once):
# 64 MiB is six full-size step answers, and bounds a worker to about its concurrency x 64 MiB of
# bodies. KServe has no such limit; `servegraph`/`rungraph` follow KServe and do not set it.
RUN_MAX_RUN_BYTES = env.int("RUN_MAX_RUN_BYTES", default=64 * 1024 * 1024)
# Step calls (HTTP and nodeName alike) one test run may make; past it the run stops, naming this.
# 10,000 is the largest run the console is built to show; a graph that is not a loop rarely calls
# more than its steps once each. A loop (a nodeName cycle fed a new input every round) otherwise
# runs until its deadline, some 10,000 calls a minute on the mock model server. Studio runs only,
# like RUN_MAX_RUN_BYTES: `servegraph`/`rungraph` follow KServe and do not set it.
RUN_MAX_STEP_CALLS = env.int("RUN_MAX_STEP_CALLS", default=10_000)
# Bytes of trace events (about their stored JSON) one test run may write; past it the run stops,
# naming this. 32 MiB holds 10,000 small steps, or 250 whose request and answer both fill
# RUN_BODY_CAP, and keeps a runaway run's rows (events and steps) well under 100 MB. Studio only.
RUN_MAX_EVENT_BYTES = env.int("RUN_MAX_EVENT_BYTES", default=32 * 1024 * 1024)
# Reading a large run back (a runaway graph stores thousands of steps and tens of thousands of
# events): `GET /api/runs/{id}/` embeds the first RUN_DETAIL_STEPS steps (with their total and a
# count by outcome; `GET /api/runs/{id}/steps/` pages through all). 200 covers every run a person
# reads step by step, and each step holds up to two capped bodies (RUN_BODY_CAP), so a detail stays
# at most a few MiB however long the run went on.
RUN_DETAIL_STEPS = env.int("RUN_DETAIL_STEPS", default=200)
# `GET /api/runs/{id}/events/?format=json` (and a suite run's) answers a page of this many events
# after `after` (or Last-Event-ID), with a `next` link; `limit` asks for up to RUN_EVENTS_PAGE_MAX.
# An ordinary event is a few hundred bytes (500 of them: a few hundred KiB, one request per 250
# steps for the console); a step's events carry at most RUN_BODY_CAP of body each, so the largest
# page stays bounded by RUN_EVENTS_PAGE_MAX x RUN_BODY_CAP whatever the run holds.
RUN_EVENTS_PAGE_SIZE = env.int("RUN_EVENTS_PAGE_SIZE", default=500)
RUN_EVENTS_PAGE_MAX = env.int("RUN_EVENTS_PAGE_MAX", default=2000)
# An event stream replays the stored backlog this many events per database read, so a stream that
# starts from the beginning of a 30,000-event run never holds the whole backlog in memory.
RUN_SSE_REPLAY_CHUNK = env.int("RUN_SSE_REPLAY_CHUNK", default=500)
RUN_SSE_KEEPALIVE_SECONDS = env.float("RUN_SSE_KEEPALIVE_SECONDS", default=15.0)
RUN_SSE_POLL_SECONDS = env.float("RUN_SSE_POLL_SECONDS", default=0.5)  # database polling without Redis
# /metrics (execution/metrics.py): readable by staff sessions, and by `Authorization: Bearer` with
# this token (empty: no token is accepted). At most this many (graph, node, step) series per step
# metric are reported, so a studio with many graphs cannot flood the scraper.
STUDIO_METRICS_TOKEN = env.str("STUDIO_METRICS_TOKEN", default="")
STUDIO_METRICS_MAX_SERIES = env.int("STUDIO_METRICS_MAX_SERIES", default=1000)
# Seconds between a worker's heartbeats in the metrics (studio_worker_heartbeat_*).
WORKER_HEARTBEAT_SECONDS = env.float("WORKER_HEARTBEAT_SECONDS", default=10.0)
RUN_SSE_MAX_SECONDS = env.float("RUN_SSE_MAX_SECONDS", default=600.0)  # then the client reconnects
# With Redis up, an idle stream still reads the database now and then (a publish can be lost),
# backing off from 10 polls to this many seconds (execution/events.py, _Recheck).
RUN_SSE_RECHECK_MAX_SECONDS = env.float("RUN_SSE_RECHECK_MAX_SECONDS", default=30.0)
# Event streams one web process serves: each holds a server thread, so keep this under the
# server's threads per process (scripts/run.sh: gunicorn --threads 64, leaving 16 for requests).
RUN_SSE_MAX_STREAMS = env.int("RUN_SSE_MAX_STREAMS", default=48)
RUN_SSE_MAX_STREAMS_PER_USER = env.int("RUN_SSE_MAX_STREAMS_PER_USER", default=10)  # a few tabs each
# Suite runs: cases of one suite run in flight at once (each one a run on the workers). A fixed 8,
# not the workers' capacity: `make run` starts one worker process per core with 8 threads each, so
# a suite run takes one process's worth and leaves the rest to single runs and a second suite run
# (one that took every thread would queue every run started meanwhile behind its cases); and the
# web process, which starts suite runs, cannot know how many workers run. Raise it with the workers.
SUITE_CONCURRENCY = env.int("SUITE_CONCURRENCY", default=8)
# One user's fair share: runs (not counting suite runs' cases) and suite runs a user may have queued
# or running at once; past that a start answers 429 with Retry-After (0: no limit). The workers take
# runs first come, first served, so without it one user's burst of slow runs queues everyone else's
# behind it. 8 runs is one worker process's threads (`make run`: one process per core, 8 threads
# each), so on the smallest machine (2 cores, 16 threads) one user leaves at least half the threads
# to the others. 2 suite runs is what a comparison of two versions starts; each takes up to
# SUITE_CONCURRENCY threads. Raise both with the workers.
RUN_MAX_IN_FLIGHT_PER_USER = env.int("RUN_MAX_IN_FLIGHT_PER_USER", default=8)
SUITE_MAX_IN_FLIGHT_PER_USER = env.int("SUITE_MAX_IN_FLIGHT_PER_USER", default=2)
# Load tests (execution/loadtests): each holds one worker thread for up to LOAD_TEST_MAX_SECONDS
# and sends up to LOAD_TEST_MAX_CONCURRENCY requests at once to the environment's hosts, so a user
# may have one queued or running (0: no limit). 10,000 requests and 64 in flight measure a graph's
# percentiles well (p99 from 100 samples at the least) without turning the studio into a flood
# tool; 600 s bounds the thread whatever the graph's latency.
LOAD_TEST_MAX_IN_FLIGHT_PER_USER = env.int("LOAD_TEST_MAX_IN_FLIGHT_PER_USER", default=1)
LOAD_TEST_MAX_REQUESTS = env.int("LOAD_TEST_MAX_REQUESTS", default=10000)
LOAD_TEST_MAX_CONCURRENCY = env.int("LOAD_TEST_MAX_CONCURRENCY", default=64)
LOAD_TEST_MAX_SECONDS = env.float("LOAD_TEST_MAX_SECONDS", default=600.0)
# What judging a test case may cost (execution/casecore/limits.py). RE2 matches in linear time,
# but its time per byte grows with the compiled program: a valid 3.5 KB regex of counted
# alternations compiles to ~50,000 instructions and takes ~7 s per search of 16 KiB. 2,000
# instructions keep a search of 64 KiB under ~30 ms while every hand-written pattern we know fits
# (a UUID is 70, an ISO timestamp 39); a larger one is refused when a case is saved or loaded.
GRAPH_TEST_REGEX_MAX_PROGRAM = env.int("GRAPH_TEST_REGEX_MAX_PROGRAM", default=2000)
# Bytes of text one `matches` searches; a longer value fails the expectation, saying so.
GRAPH_TEST_REGEX_MAX_INPUT = env.int("GRAPH_TEST_REGEX_MAX_INPUT", default=64 * 1024)
# CPU seconds to judge one case (its expectations: 200 at most), then the case is an error naming
# this setting: far above an honest case (milliseconds), far below holding a worker thread.
GRAPH_TEST_CASE_JUDGE_SECONDS = env.float("GRAPH_TEST_CASE_JUDGE_SECONDS", default=5.0)
# CPU seconds to judge all the cases of one suite run (1,000 cases at most), summed over the
# workers; the cases judged after it is spent are errors naming this setting. Five minutes: a
# suite of honest cases never comes near, a hostile one cannot hold the workers for hours.
GRAPH_TEST_SUITE_JUDGE_SECONDS = env.float("GRAPH_TEST_SUITE_JUDGE_SECONDS", default=300.0)
# RE2 instructions of an environment's header propagation pattern (refused when the environment is
# saved): each client header name is searched with each pattern on every step call, so the same
# bound as a test's regex, for the same reason; a real pattern (^X-Request-Id$) is a few dozen.
HEADER_PATTERN_MAX_PROGRAM = env.int("HEADER_PATTERN_MAX_PROGRAM", default=2000)
# One beat sends the schedule per broker, whatever runs: it holds a lock in Redis (config/beat.py).
CELERY_BEAT_SCHEDULER = "config.beat:SingleScheduler"
CELERY_BEAT_SCHEDULE = {
    "reap-stuck-runs": {
        "task": "execution.reap_runs",
        "schedule": env.float("RUN_REAPER_SECONDS", default=15.0),
    },
}

# ---------------------------------------------------------------------------------------------
# Single sign-on (config/sso; README "Single sign-on"). Off by default: the embedded one-machine
# setup signs in with studio passwords, and nothing here is active until its variables are set.
# ---------------------------------------------------------------------------------------------
INSTALLED_APPS += ["config.sso"]  # the audit rows of sign-ins and sign-outs
# The password form and every password check (admin included). On by default, for the embedded
# setup; 0 behind single sign-on. API tokens are not passwords and keep working either way.
STUDIO_PASSWORD_LOGIN = env.bool("STUDIO_PASSWORD_LOGIN", default=True)

# OpenID Connect (mozilla-django-oidc; authorization code flow with PKCE). On when a client id and
# either an issuer (its discovery document names the endpoints) or an authorization endpoint are set.
STUDIO_OIDC_ISSUER = env.str("STUDIO_OIDC_ISSUER", default="").rstrip("/")
STUDIO_OIDC_PROVIDER_NAME = env.str("STUDIO_OIDC_PROVIDER_NAME", default="single sign-on")  # "Sign in with …"
OIDC_RP_CLIENT_ID = env.str("STUDIO_OIDC_CLIENT_ID", default="")
OIDC_RP_CLIENT_SECRET = env.str("STUDIO_OIDC_CLIENT_SECRET", default="")
OIDC_RP_SCOPES = env.str("STUDIO_OIDC_SCOPES", default="openid email profile")
# RS256 is what providers sign ID tokens with by default (and the only algorithm OIDC requires).
OIDC_RP_SIGN_ALGO = env.str("STUDIO_OIDC_SIGN_ALGO", default="RS256")
# preferred_username by default: the login name most providers (Keycloak, Dex, Entra ID) send. A
# user of that name is the same user, whether made by a password or the provider.
STUDIO_OIDC_USERNAME_CLAIM = env.str("STUDIO_OIDC_USERNAME_CLAIM", default="preferred_username")
STUDIO_OIDC_GROUPS_CLAIM = env.str("STUDIO_OIDC_GROUPS_CLAIM", default="groups")
# Members of any of these groups are staff (the admin); empty: nobody is made staff by the provider.
STUDIO_OIDC_STAFF_GROUPS = env.list("STUDIO_OIDC_STAFF_GROUPS", default=[])
# Explicit endpoints, for a provider without discovery (each one overrides the discovered one).
STUDIO_OIDC_ENDPOINTS = {
    name: env.str(f"STUDIO_OIDC_{name.upper()}_ENDPOINT", default="")
    for name in ("authorization", "token", "userinfo", "jwks", "end_session")
}
# Seconds the discovery document is kept: an hour, so a provider that moves an endpoint is followed
# without a restart (the signing keys are fetched at every sign-in, so key rotation needs no wait).
STUDIO_OIDC_DISCOVERY_TTL = env.int("STUDIO_OIDC_DISCOVERY_TTL", default=3600)
STUDIO_OIDC_ENABLED = bool(
    OIDC_RP_CLIENT_ID and (STUDIO_OIDC_ISSUER or STUDIO_OIDC_ENDPOINTS["authorization"])
)
OIDC_USE_PKCE = True
OIDC_PKCE_CODE_CHALLENGE_METHOD = "S256"
OIDC_STORE_ID_TOKEN = True  # the id_token_hint of RP-initiated logout
OIDC_TIMEOUT = env.float("STUDIO_OIDC_TIMEOUT", default=10.0)  # seconds per call to the provider
# A signed-in page load re-asks the provider (prompt=none) this often: 15 minutes, the library's
# default, bounds how long a session outlives its end at the provider.
OIDC_RENEW_ID_TOKEN_EXPIRY_SECONDS = env.int("STUDIO_OIDC_RECHECK_SECONDS", default=15 * 60)
OIDC_EXEMPT_URLS = ["login", "logout", re.compile(r"^/(api|static)/")]
OIDC_AUTHENTICATION_CALLBACK_URL = "oidc_authentication_callback"
# The library's settings read at class set-up; the endpoints themselves resolve lazily (config/sso/oidc.py).
OIDC_OP_AUTHORIZATION_ENDPOINT = STUDIO_OIDC_ENDPOINTS["authorization"]
OIDC_OP_TOKEN_ENDPOINT = STUDIO_OIDC_ENDPOINTS["token"]
OIDC_OP_USER_ENDPOINT = STUDIO_OIDC_ENDPOINTS["userinfo"]

# An authenticating proxy's identity header (oauth2-proxy: X-Auth-Request-Email or X-Forwarded-User;
# Kubeflow: kubeflow-userid), believed only from the proxy's own addresses (CIDRs, matched against
# the TCP peer, never X-Forwarded-For). Empty: no header is believed.
STUDIO_PROXY_USER_HEADER = env.str("STUDIO_PROXY_USER_HEADER", default="")
STUDIO_PROXY_TRUSTED_NETWORKS = env.list("STUDIO_PROXY_TRUSTED_NETWORKS", default=[])
if STUDIO_PROXY_USER_HEADER and not STUDIO_PROXY_TRUSTED_NETWORKS:
    raise ImproperlyConfigured(
        "STUDIO_PROXY_USER_HEADER needs STUDIO_PROXY_TRUSTED_NETWORKS (the proxy's CIDRs)."
    )

AUTHENTICATION_BACKENDS = [
    "config.sso.backends.PasswordLoginSwitch",  # refuses passwords while STUDIO_PASSWORD_LOGIN is off
    "django.contrib.auth.backends.ModelBackend",
    "config.sso.oidc.StudioOIDCBackend",  # answers only the OIDC callback, only when configured
    "config.sso.proxy.TrustedProxyBackend",  # answers only the proxy middleware, only when configured
]
# Both are no-ops while their settings are empty.
MIDDLEWARE.insert(
    MIDDLEWARE.index("django.contrib.auth.middleware.AuthenticationMiddleware") + 1,
    "config.sso.proxy.TrustedProxyUserMiddleware",
)
MIDDLEWARE.insert(
    MIDDLEWARE.index("config.sso.proxy.TrustedProxyUserMiddleware") + 1,
    "config.sso.oidc.StudioSessionRefresh",
)

# Deploying versions through Git (deploys/). Seconds each Git network operation may take (a fetch,
# a push); how long the deploy API waits for the worker's push before answering 202 (the
# deployment is then "pending" and its row tells how it ended); the local directories file://
# targets may point into (empty: none; file:// is for development and tests); the most bytes a
# branch head's fetch may bring.
DEPLOY_GIT_TIMEOUT = env.float("DEPLOY_GIT_TIMEOUT", default=30.0)
DEPLOY_WAIT_SECONDS = env.float("DEPLOY_WAIT_SECONDS", default=45.0)
DEPLOY_FILE_ROOTS = env.list("DEPLOY_FILE_ROOTS", default=[])
DEPLOY_MAX_FETCH_BYTES = env.int("DEPLOY_MAX_FETCH_BYTES", default=16 * 1024 * 1024)
