"""Settings from the environment (12-factor). Defaults are the embedded one-machine setup:
SQLite in the project folder and a Redis on loopback. Production sets DJANGO_DEBUG=0 and a secret."""

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
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "config.middleware.RequestSizeLimitMiddleware",
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

# Request body caps: manifests are small; anything bigger is refused with 413 naming the limit.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("STUDIO_MAX_REQUEST_BYTES", default=2 * 1024 * 1024)
STUDIO_MAX_MANIFEST_BYTES = env.int("STUDIO_MAX_MANIFEST_BYTES", default=2 * 1024 * 1024)
# Documents per import request: 100 covers exporting a namespace's graphs with kubectl; a bigger
# stream is split by the client (each document is committed on its own, graphs/imports.py).
STUDIO_MAX_IMPORT_DOCUMENTS = env.int("STUDIO_MAX_IMPORT_DOCUMENTS", default=100)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
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
    "DESCRIPTION": "Versioned KServe InferenceGraphs: store, diff, export, validate and test-run them.",
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
# Visibility timeout: a task not acked within this many seconds is redelivered to another worker.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=600)}

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

CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}
LOGIN_MAX_FAILURES = env.int("STUDIO_LOGIN_MAX_FAILURES", default=5)
LOGIN_FAILURE_WINDOW = env.int("STUDIO_LOGIN_FAILURE_WINDOW", default=300)

# ---------------------------------------------------------------------------------------------
# Test runs (the execution app). Seconds unless named otherwise.
# ---------------------------------------------------------------------------------------------
MOCKMODELS_URL = env.str("MOCKMODELS_URL", default="http://127.0.0.1:9010")
RUN_EVENTS_REDIS_URL = env.str("RUN_EVENTS_REDIS_URL", default=REDIS_URL)  # pub/sub fan-out + secret headers
RUN_MAX_DEADLINE = env.float("RUN_MAX_DEADLINE", default=300.0)  # the most an environment may allow
# How long past a run's deadline a worker waits before it gives up on the run.
RUN_DEADLINE_GRACE = env.float("RUN_DEADLINE_GRACE", default=10.0)
RUN_HEARTBEAT_SECONDS = env.float("RUN_HEARTBEAT_SECONDS", default=2.0)
RUN_HEARTBEAT_TIMEOUT = env.float("RUN_HEARTBEAT_TIMEOUT", default=20.0)  # silent this long: the worker died
RUN_QUEUED_TIMEOUT = env.float("RUN_QUEUED_TIMEOUT", default=300.0)  # queued this long: the message was lost
RUN_MAX_ATTEMPTS = env.int("RUN_MAX_ATTEMPTS", default=2)
RUN_SECRET_HEADERS_TTL = env.int("RUN_SECRET_HEADERS_TTL", default=3600)
RUN_BODY_CAP = env.int("RUN_BODY_CAP", default=64 * 1024)  # bytes of each body kept in runs and traces
RUN_MAX_RESPONSE_BYTES = env.int("RUN_MAX_RESPONSE_BYTES", default=10 * 1024 * 1024)
# All response bodies of one test run together (a wide Ensemble holds every member's body at once):
# 64 MiB is six full-size step answers, and bounds a worker to about its concurrency x 64 MiB of
# bodies. KServe has no such limit; `servegraph`/`rungraph` follow KServe and do not set it.
RUN_MAX_RUN_BYTES = env.int("RUN_MAX_RUN_BYTES", default=64 * 1024 * 1024)
RUN_SSE_KEEPALIVE_SECONDS = env.float("RUN_SSE_KEEPALIVE_SECONDS", default=15.0)
RUN_SSE_POLL_SECONDS = env.float("RUN_SSE_POLL_SECONDS", default=0.5)  # database polling without Redis
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
CELERY_BEAT_SCHEDULE = {
    "reap-stuck-runs": {
        "task": "execution.reap_runs",
        "schedule": env.float("RUN_REAPER_SECONDS", default=15.0),
    },
}
