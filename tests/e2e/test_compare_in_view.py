"""Compare on the canvas brings the changed steps into view, in the Flow and in the Nodes view,
when the graph is larger than the canvas and the change is out of view."""

from __future__ import annotations

import re
from typing import Any

import pytest
from canvaskit import card, open_tab
from playwright.sync_api import Locator, Page, expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

LONG = 14


def chain(last: str) -> dict[str, Any]:
    steps = [{"name": f"m{i}", "serviceName": f"model-{i}"} for i in range(LONG - 1)]
    steps.append({"name": f"m{LONG - 1}", "serviceName": last, "data": "$response"})
    return {"root": {"routerType": "Sequence", "steps": steps}}


def fan(last: str) -> dict[str, Any]:
    """A root calling twelve Ensembles, the last of which changes."""
    nodes: dict[str, Any] = {
        "root": {
            "routerType": "Sequence",
            "steps": [{"name": f"s{i}", "nodeName": f"n{i}"} for i in range(12)],
        }
    }
    for i in range(12):
        nodes[f"n{i}"] = {
            "routerType": "Ensemble",
            "steps": [{"serviceName": last if i == 11 else f"model-{i}"}],
        }
    return nodes


def in_canvas(page: Page, locator: Locator) -> bool:
    b = locator.bounding_box()
    c = page.locator(".canvas").bounding_box()
    assert c is not None
    return (
        b is not None
        and b["x"] >= c["x"] - 1
        and b["y"] >= c["y"] - 1
        and b["x"] + b["width"] <= c["x"] + c["width"] + 1
        and b["y"] + b["height"] <= c["y"] + c["height"] + 1
    )


def compare_v1_v2(page: Page) -> None:
    open_tab(page, "History")
    expect(page.get_by_label("Compare to version")).to_have_value("2")
    page.get_by_role("button", name="Compare on canvas").click()
    expect(page.locator(".compare-banner")).to_contain_text("Comparing v1 → v2")


def test_compare_brings_the_changed_step_into_view_in_the_flow_view(
    flow_page: Page, make_graph: Any, add_version: Any, live_server: Any
) -> None:
    graph = make_graph("long-chain", nodes=chain("model-last"))
    add_version(graph, chain("model-changed"), message="Change the last step")
    page = flow_page
    page.goto(f"{live_server.url}/graphs/long-chain/")
    expect(page.locator(".flow-canvas[data-laid-out]")).to_be_visible()
    last = page.locator(f'.flow-box[data-box="root/{LONG - 1}"]')
    first = page.locator('.flow-box[data-box="root/0"]')
    expect(first).to_be_visible()
    assert in_canvas(page, first)
    assert not in_canvas(page, last)  # a long chain opens readable, at its start

    compare_v1_v2(page)
    expect(last).to_have_class(re.compile(r"\bmark-changed\b"))
    for _ in range(40):
        if in_canvas(page, last):
            break
        page.wait_for_timeout(100)
    assert in_canvas(page, last)


def test_compare_brings_the_changed_card_into_view_in_the_nodes_view(
    user_page: Page, make_graph: Any, add_version: Any, live_server: Any
) -> None:
    positions = {"root": {"x": 0, "y": 0}, **{f"n{i}": {"x": 400 + 380 * i, "y": 0} for i in range(12)}}
    layout = {"nodes": positions, "viewport": {"x": 40, "y": 40, "zoom": 1}}
    graph = make_graph("wide-fan", nodes=fan("model-last"), layout=layout)
    add_version(graph, fan("model-changed"), layout=layout, message="Change the last Ensemble")
    page = user_page
    page.goto(f"{live_server.url}/graphs/wide-fan/")
    expect(card(page, "root")).to_be_visible()
    assert not in_canvas(page, card(page, "n11"))

    compare_v1_v2(page)
    expect(card(page, "n11")).to_have_class(re.compile(r"\bmark-changed\b"))
    for _ in range(40):
        if in_canvas(page, card(page, "n11")):
            break
        page.wait_for_timeout(100)
    assert in_canvas(page, card(page, "n11"))
