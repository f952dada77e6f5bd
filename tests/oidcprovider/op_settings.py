"""Settings of the throwaway OpenID provider the SSO tests start (django-oidc-provider on loopback).

Its own database file and its own cookie names: the browser sends cookies for 127.0.0.1 to every
port, so the provider's session must not share the studio's cookie name."""

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent

DEBUG = False
SECRET_KEY = "oidc-test-provider-not-secret"
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
SITE_URL = os.environ["OP_SITE_URL"]  # http://127.0.0.1:PORT: the issuer is SITE_URL + /openid

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oidc_provider",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
ROOT_URLCONF = "op_urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [HERE / "op_templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
            ]
        },
    }
]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["OP_DB"]}}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
USE_TZ = True
LOGIN_URL = "/accounts/login/"
SESSION_COOKIE_NAME = "op_sessionid"
CSRF_COOKIE_NAME = "op_csrftoken"

OIDC_USERINFO = "op_claims.userinfo"
OIDC_EXTRA_SCOPE_CLAIMS = "op_claims.GroupsScopeClaims"
OIDC_IDTOKEN_INCLUDE_CLAIMS = False  # groups only from userinfo: the studio must merge both
