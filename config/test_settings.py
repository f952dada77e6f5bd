"""Settings for the test suite: the real settings, with a throwaway key and fast password hashing."""

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "test-only-key-not-secret")
os.environ.setdefault("DJANGO_DEBUG", "0")

from config.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # speed; tests only
STORAGES["staticfiles"]["BACKEND"] = "django.contrib.staticfiles.storage.StaticFilesStorage"  # noqa: F405
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
SECURE_SSL_REDIRECT = False  # the test client and live servers speak plain HTTP

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    # A file, not SQLite's shared in-memory database: the worker, the live server and racing
    # threads then lock and wait the way they do in production instead of failing with "locked".
    import tempfile

    DATABASES["default"]["TEST"] = {  # noqa: F405
        "NAME": os.path.join(tempfile.gettempdir(), f"studio-test-{os.getpid()}.sqlite3")
    }

# The in-process test worker (tests/conftest.py) closes its threads' database connections after
# every task, as Celery does by default: connections kept across tasks would outlive the session's
# worker and hold the PostgreSQL test database open at its teardown. Worker processes started by
# the tests (tests/reliability) run with config.settings, connections kept.
CELERY_DB_REUSE_MAX = None
