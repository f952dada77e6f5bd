"""Browser tests: the real built frontend (frontend/dist) in Debian's headless Chromium.

Playwright drives a Django live server (pytest-django's ``live_server``, which serves the built
bundle through the staticfiles finders). Tests that touch the ORM while the live server runs need
``@pytest.mark.django_db(transaction=True)``: the server thread must see committed rows.

Fixtures here:
- ``browser_type_launch_args``: Debian's /usr/bin/chromium with the flags from ENVIRONMENT.md.
- ``built_frontend``: fails every test with a clear message when the bundle was not built.
- ``studio_user`` / ``login`` / ``editor_page``: a user and a browser context logged in as them
  (the session cookie is injected; ``test_login_form_signs_in`` goes through the real form).
- ``make_graph`` / ``add_version``: graphs and versions through the services, as the API would.
- ``shot``: a screenshot under test-artifacts/screenshots/.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# Playwright's sync API runs an event loop in the main thread; Django would then refuse ORM calls
# made by the test itself (SynchronousOnlyOperation). The ORM calls here are ordinary sync code.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

from playwright.sync_api import BrowserContext, Page, expect

REPO = Path(__file__).resolve().parents[2]
DIST = REPO / "frontend" / "dist" / "assets"
SCREENSHOTS = REPO / "test-artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"

# A slow shared 2-core machine: auto-waiting assertions get a generous budget.
EXPECT_TIMEOUT_MS = 15_000
ACTION_TIMEOUT_MS = 20_000
expect.set_options(timeout=EXPECT_TIMEOUT_MS)

# frontend/src/flow/viewPref.ts: where the editor remembers the Flow / Nodes choice, and the
# direction of the Flow view (left to right or top to bottom; by default the view picks).
CANVAS_VIEW_KEY = "inference-graph-studio:canvas-view"
FLOW_DIRECTION_KEY = "inference-graph-studio:flow-direction"

PASSWORD = "e2e-password-1"  # a throwaway account in the throwaway test database


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this folder is a browser test (the modules mark themselves too)."""
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """Debian's Chromium (``playwright install`` cannot download browsers here)."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(
            f"{CHROMIUM} is missing: `apt-get install -y chromium` (scripts/test.sh does it as root)."
        )
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-quic",
        ],
    }


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    # Wide enough for palette + canvas + side panel side by side.
    return {**browser_context_args, "viewport": {"width": 1440, "height": 900}, "accept_downloads": True}


@pytest.fixture(scope="session", autouse=True)
def built_frontend() -> Path:
    """The built bundle the templates include; without it every page is blank."""
    missing = [
        name
        for page in ("editor", "list", "environments", "tokens", "deploytargets")
        for name in (f"{page}.js", f"{page}.css")
        if not (DIST / name).is_file()
    ]
    if missing:
        pytest.fail(
            f"The frontend is not built ({', '.join(missing)} missing in {DIST}). "
            "Run `make setup` (or `cd frontend && npm ci && npm run build`); `make test` builds it first.",
            pytrace=False,
        )
    return DIST


# ---- users and login ---------------------------------------------------------------------------


@pytest.fixture
def studio_user(transactional_db: None) -> Any:
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user("erin", password=PASSWORD)


def session_cookie_for(user: Any, url: str) -> dict[str, Any]:
    """A logged-in session for ``user``, as a cookie for ``url`` (what /login/ would set)."""
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    return {
        "name": settings.SESSION_COOKIE_NAME,
        "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
        "url": url,
    }


class PageErrors:
    """Uncaught exceptions in the page: a test that provokes one fails at teardown."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def watch(self, page: Page) -> Page:
        page.on("pageerror", lambda exc: self.errors.append(f"{page.url}: {exc}"))
        page.set_default_timeout(ACTION_TIMEOUT_MS)
        return page


@pytest.fixture
def page_errors() -> Iterator[PageErrors]:
    watcher = PageErrors()
    yield watcher
    assert not watcher.errors, "uncaught errors in the page:\n" + "\n".join(watcher.errors)


@pytest.fixture
def login(
    new_context: Callable[..., BrowserContext], live_server: Any, page_errors: PageErrors
) -> Callable[[Any], Page]:
    """``login(user)`` -> a page in a fresh browser context with ``user``'s session cookie.

    The editor opens in the Flow view by default; the browser tests written for the Nodes view's
    cards start there (the choice the toolbar's switch remembers, set before the page loads unless
    the test made another). ``login(user, canvas_view=None)`` leaves the default. The Flow view's
    tests that walk the picture left to right have it so (``flow_direction="LR"``, the default
    here); ``flow_direction=None`` lets the view pick as it does for a new user."""

    def _login(user: Any, *, canvas_view: str | None = "nodes", flow_direction: str | None = "LR") -> Page:
        context = new_context()
        context.add_cookies([session_cookie_for(user, live_server.url)])
        for key, value in ((CANVAS_VIEW_KEY, canvas_view), (FLOW_DIRECTION_KEY, flow_direction)):
            if value is None:
                continue
            k, v = json.dumps(key), json.dumps(value)
            context.add_init_script(
                f"try {{ if (!localStorage.getItem({k})) localStorage.setItem({k}, {v}); }} catch (e) {{}}"
            )
        return page_errors.watch(context.new_page())

    return _login


@pytest.fixture
def user_page(login: Callable[..., Page], studio_user: Any) -> Page:
    """A page logged in as ``studio_user`` (nothing opened yet), the editor in the Nodes view."""
    return login(studio_user)


@pytest.fixture
def flow_page(login: Callable[..., Page], studio_user: Any) -> Page:
    """A page logged in as ``studio_user`` whose editor opens in its default view (Flow)."""
    return login(studio_user, canvas_view=None)


@pytest.fixture
def open_editor(live_server: Any) -> Callable[..., None]:
    """``open_editor(page, name)``: goes to the editor and waits until the canvas shows its cards."""

    def _open(page: Page, name: str, *, cards: int | None = None, query: str = "") -> None:
        page.goto(f"{live_server.url}/graphs/{name}/{query}")
        expect(page.locator(".react-flow__pane")).to_be_visible()
        if cards is None:
            expect(page.locator(".router-card").first).to_be_visible()
        else:
            expect(page.locator(".router-card")).to_have_count(cards)

    return _open


# ---- data through the services -----------------------------------------------------------------


def manifest_of(name: str, nodes: dict[str, Any], namespace: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "InferenceGraph",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"nodes": copy.deepcopy(nodes)},
    }


@pytest.fixture
def make_graph(studio_user: Any) -> Callable[..., Any]:
    """``make_graph(name, nodes=..., layout=..., message=...)``: a graph and its version 1."""
    from graphs import services

    def _make(
        name: str,
        nodes: dict[str, Any] | None = None,
        *,
        layout: dict[str, Any] | None = None,
        message: str = "Created",
        description: str = "",
        owner: Any = None,
    ) -> Any:
        body = nodes if nodes is not None else {"root": {"routerType": "Sequence", "steps": []}}
        return services.graph_create(
            owner=owner or studio_user,
            name=name,
            description=description,
            manifest=manifest_of(name, body),
            layout=layout or {},
            message=message,
        )

    return _make


@pytest.fixture
def stack(worker: Any, run_settings: None, studio_user: Any) -> Any:
    """The worker is up and the ``local`` environment points at the session's mock model server."""
    from execution.services import environments

    environment, _ = environments.ensure_local_environment()
    return environment


@pytest.fixture
def add_version(studio_user: Any) -> Callable[..., Any]:
    """``add_version(graph, nodes, message=...)``: the next version, saved on top of the latest."""
    from graphs import services
    from graphs.models import Graph

    def _add(
        graph: Any, nodes: dict[str, Any], *, layout: dict[str, Any] | None = None, message: str = ""
    ) -> Any:
        fresh = Graph.objects.get(pk=graph.pk)
        result = services.graph_version_create(
            graph=fresh,
            manifest=manifest_of(fresh.name, nodes, fresh.namespace),
            layout=layout
            if layout is not None
            else (fresh.latest_version.layout if fresh.latest_version else {}),
            author=studio_user,
            message=message,
            base_version=fresh.latest_version.number if fresh.latest_version else None,
        )
        return result.version

    return _add


def api_get(page: Page, base_url: str, path: str) -> Any:
    """GET an API path with the page's session (the same cookies a person's browser sends)."""
    response = page.request.get(f"{base_url}{path}")
    assert response.ok, f"GET {path}: {response.status} {response.text()[:300]}"
    return response.json()


# ---- screenshots -------------------------------------------------------------------------------


@pytest.fixture
def shot(request: pytest.FixtureRequest) -> Callable[[Page, str], Path]:
    """``shot(page, "saved")`` -> test-artifacts/screenshots/<test>--saved.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    test = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name).strip("-")

    def _shot(page: Page, state: str) -> Path:
        path = SCREENSHOTS / f"{test}--{state}.png"
        page.screenshot(path=str(path))
        return path

    return _shot
