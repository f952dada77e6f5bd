"""Dropping an image on the Run panel's drop zone, with the drag events a browser sends.

The picker's file chooser has its test beside the real models (test_real_models_run.py); this one
drops files instead: a ``DataTransfer`` holding a ``File`` built in the page, carried by real
``dragenter`` / ``dragover`` / ``drop`` events dispatched on the zone (Playwright cannot drag a file
from the desktop). No run is started, so no worker or model server is needed.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import pytest
from playwright.sync_api import JSHandle, Locator, Page, expect

from execution.devtools import demo

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# A file the Run panel refuses for its size: over MAX_IMAGE_FILE_BYTES (frontend/src/panels/run/images.ts).
OVER_SIZE_BYTES = 1_600_000
DRAG_OVER = re.compile(r"\bdrag-over\b")  # the zone's highlight while a drag is over it

BUILD_TRANSFER = """(files) => {
    const transfer = new DataTransfer();
    for (const f of files) {
        if (f.text !== undefined) {
            transfer.setData("text/plain", f.text);
            continue;
        }
        const bytes = f.b64 !== undefined
            ? Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))
            : new Uint8Array(f.size).fill(0xff);
        transfer.items.add(new File([bytes], f.name, { type: f.type }));
    }
    return transfer;
}"""


def transfer(page: Page, *files: dict[str, Any]) -> JSHandle:
    """A DataTransfer in the page holding ``files`` (``name``, ``type`` and ``b64`` or ``size``),
    or dragged text (``{"text": ...}``)."""
    return page.evaluate_handle(BUILD_TRANSFER, list(files))


def cancelled(zone: Locator, kind: str, data: JSHandle) -> bool:
    """Dispatches a ``kind`` drag event on the zone; True when a handler cancelled it (a browser
    accepts a drop only where dragenter and dragover were cancelled, and a cancelled drop is not
    opened as a page)."""
    return bool(
        zone.evaluate(
            """(el, [kind, data]) => !el.dispatchEvent(
                new DragEvent(kind, { bubbles: true, cancelable: true, composed: true, dataTransfer: data })
            )""",
            [kind, data],
        )
    )


def drop(zone: Locator, data: JSHandle) -> None:
    """The events of a drag that ends on the zone, as Playwright dispatches them."""
    for kind in ("dragenter", "dragover", "drop"):
        zone.dispatch_event(kind, {"dataTransfer": data})


@pytest.fixture
def run_tab(make_graph: Any, user_page: Page, open_editor: Any) -> Page:
    """The face-recognition demo open on its Run tab (its payloads carry an image)."""
    manifest, _layout, description, _request = demo.DEMO_GRAPHS["face-recognition"]
    make_graph(
        "face-recognition",
        manifest["spec"]["nodes"],
        layout=demo.demo_layout("face-recognition"),
        description=description,
    )
    open_editor(user_page, "face-recognition", cards=2)
    user_page.get_by_role("tab", name="Run").click()
    return user_page


def payload_of(page: Page) -> Any:
    return json.loads(page.get_by_label("Payload (JSON)").input_value())


def test_dropping_a_photo_shows_its_thumbnail_and_sends_its_bytes_as_b64(run_tab: Page, shot: Any) -> None:
    page = run_tab
    zone = page.get_by_test_id("image-drop-zone")
    # Still a real control for choosing a file, with its visible text.
    expect(zone.get_by_text("Choose an image…")).to_be_visible()
    expect(zone.get_by_label("Image file for the payload")).to_have_attribute("type", "file")
    photo = (demo.PHOTOS / "astronaut.jpg").read_bytes()
    data = transfer(
        page, {"name": "astronaut.jpg", "type": "image/jpeg", "b64": base64.b64encode(photo).decode()}
    )

    # The browser takes the drop only where the drag is accepted: the zone cancels both events,
    # and shows that it would take it.
    assert cancelled(zone, "dragenter", data)
    assert cancelled(zone, "dragover", data)
    expect(zone).to_have_class(DRAG_OVER)
    # Moving onto the button inside the zone keeps the highlight; leaving the zone drops it.
    leave = "(el, to) => el.dispatchEvent(new DragEvent('dragleave', { bubbles: true, relatedTarget: to }))"
    zone.evaluate(leave, zone.locator("label").element_handle())
    expect(zone).to_have_class(DRAG_OVER)
    zone.evaluate(leave, page.locator("body").element_handle())
    expect(zone).not_to_have_class(DRAG_OVER)
    assert cancelled(zone, "dragover", data)
    expect(zone).to_have_class(DRAG_OVER)
    assert cancelled(zone, "drop", data)
    expect(zone).not_to_have_class(DRAG_OVER)

    thumb = page.get_by_alt_text("The picked image, astronaut.jpg")
    expect(thumb).to_be_visible()
    # The thumbnail is the dropped photo, decoded (512 px wide), not a broken image.
    page.wait_for_function("(img) => img.complete && img.naturalWidth > 0", arg=thumb.element_handle())
    assert thumb.evaluate("(img) => img.naturalWidth") == 512
    expect(zone).to_contain_text("astronaut.jpg")
    body = payload_of(page)
    assert body == {"instances": [{"image": {"b64": base64.b64encode(photo).decode("ascii")}}]}
    assert base64.b64decode(body["instances"][0]["image"]["b64"]) == photo
    expect(zone.get_by_role("alert")).to_have_count(0)
    shot(page, "dropped")


def test_a_dropped_file_that_is_not_an_image_or_too_large_is_refused_visibly(run_tab: Page) -> None:
    page = run_tab
    zone = page.get_by_test_id("image-drop-zone")
    before = payload_of(page)

    drop(
        zone,
        transfer(
            page, {"name": "notes.txt", "type": "text/plain", "b64": base64.b64encode(b"hello").decode()}
        ),
    )
    alert = zone.get_by_role("alert")
    expect(alert).to_have_text("notes.txt is not an image (text/plain).")
    assert payload_of(page) == before

    drop(zone, transfer(page, {"name": "huge.jpg", "type": "image/jpeg", "size": OVER_SIZE_BYTES}))
    expect(alert).to_contain_text("huge.jpg is 1.6 MB; the Run panel takes images up to 1.5 MB")
    assert payload_of(page) == before

    # Bytes that are no image, whatever the name and type say.
    drop(
        zone,
        transfer(
            page,
            {
                "name": "fake.jpg",
                "type": "image/jpeg",
                "b64": base64.b64encode(b"not a jpeg at all").decode(),
            },
        ),
    )
    expect(alert).to_contain_text("fake.jpg is not an image")
    assert payload_of(page) == before

    # Text dragged from elsewhere is no file: the zone says what it wants.
    drop(zone, transfer(page, {"text": "hello"}))
    expect(alert).to_contain_text("Drop an image file")
    assert payload_of(page) == before
    expect(page.get_by_role("img", name="The picked image", exact=False)).to_have_count(0)

    # A good photo afterwards clears the error.
    photo = (demo.PHOTOS / "chelsea.jpg").read_bytes()
    drop(
        zone,
        transfer(
            page, {"name": "chelsea.jpg", "type": "image/jpeg", "b64": base64.b64encode(photo).decode()}
        ),
    )
    expect(page.get_by_alt_text("The picked image, chelsea.jpg")).to_be_visible()
    expect(alert).to_have_count(0)
    assert payload_of(page) == {"instances": [{"image": {"b64": base64.b64encode(photo).decode("ascii")}}]}
