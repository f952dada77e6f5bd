"""Starts the test OpenID provider: ``python serve.py PORT CONFIG.json`` with OP_DB and OP_SITE_URL
set (see harness.py). Migrates its own SQLite file, makes an RSA signing key, the users (with their
groups) and one confidential client for the code flow, then serves on 127.0.0.1:PORT until killed."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "op_settings")

import django

django.setup()

from django.contrib.auth.models import Group, User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.core.servers.basehttp import run  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from oidc_provider.models import Client, ResponseType  # noqa: E402


def main() -> None:
    port = int(sys.argv[1])
    with open(sys.argv[2]) as handle:
        config = json.load(handle)
    call_command("migrate", verbosity=0, interactive=False)
    call_command("creatersakey")
    for spec in config["users"]:
        user = User.objects.create_user(
            spec["username"], email=spec.get("email", ""), password=spec["password"]
        )
        for name in spec.get("groups", []):
            user.groups.add(Group.objects.get_or_create(name=name)[0])
    client = Client.objects.create(
        name="studio",
        client_type="confidential",
        client_id=config["client_id"],
        client_secret=config["client_secret"],
        jwt_alg="RS256",
        require_consent=False,
        reuse_consent=True,
    )
    client.redirect_uris = config["redirect_uris"]
    client.post_logout_redirect_uris = config.get("post_logout_redirect_uris", [])
    client.scope = ["openid", "email", "profile", "groups"]
    client.save()
    client.response_types.add(ResponseType.objects.get(value="code"))
    print("ready", flush=True)
    run("127.0.0.1", port, get_wsgi_application(), threading=True)


if __name__ == "__main__":
    main()
