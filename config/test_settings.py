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
# The demo graphs run on the mock model server in tests, whatever `make run` exported; the tests of
# the real models start their own model server and point an environment at it.
LOCAL_MODELS_URL = ""

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    # A file, not SQLite's shared in-memory database: the worker, the live server and racing
    # threads then lock and wait the way they do in production instead of failing with "locked".
    import atexit
    import contextlib
    import tempfile

    _TEST_DATABASE = os.path.join(tempfile.gettempdir(), f"studio-test-{os.getpid()}.sqlite3")
    DATABASES["default"]["TEST"] = {"NAME": _TEST_DATABASE}  # noqa: F405

    def _remove_test_database_sidecars(name: str = _TEST_DATABASE) -> None:
        """Django deletes the test database at the end; SQLite's -wal and -shm files and the
        workers' write-turn lock file (execution/services/writes.py) beside it go with it."""
        if os.path.exists(name):  # kept (--reuse-db): its files stay whole
            return
        for suffix in ("-wal", "-shm", ".write-turn"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(name + suffix)

    atexit.register(_remove_test_database_sidecars)

# The in-process test worker (tests/conftest.py) closes its threads' database connections after
# every task, as Celery does by default: connections kept across tasks would outlive the session's
# worker and hold the PostgreSQL test database open at its teardown. Worker processes started by
# the tests (tests/reliability) run with config.settings, connections kept.
CELERY_DB_REUSE_MAX = None
