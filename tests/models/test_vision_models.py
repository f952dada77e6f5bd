"""The demo's real models (models/vision.py) on the images scikit-image ships, run with the models'
own interpreter (.venv-models: OpenCV, scikit-image and KServe live there, not in the studio's
virtualenv). One subprocess computes every answer; the tests read them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from modelkit import ROOT, models_python

pytestmark = pytest.mark.models

SCRIPT = r"""
import base64, json
import cv2
from skimage import data
from models import vision

def b64(rgb, ext=".png"):
    image = rgb if rgb.ndim == 2 else cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)
    ok, buffer = cv2.imencode(ext, image)
    return base64.b64encode(buffer.tobytes()).decode()

def request(*images):
    return {"instances": [{"image": {"b64": image}} for image in images]}

def error(function, body):
    try:
        function(body)
    except vision.ModelInputError as exc:
        return str(exc)
    return None

astronaut, chelsea, rocket = b64(data.astronaut()), b64(data.chelsea()), b64(data.rocket())
detected = vision.face_detector(request(astronaut, rocket))
features = vision.feature_extractor(detected)
employees = vision.matcher(features, "employees")
visitors = vision.matcher(features, "visitors")
merged = vision.result_merger({"db-employees": employees, "db-visitors": visitors})
photo = open("models/samples/astronaut.jpg", "rb").read()
photo_answer = vision.face_detector(request(base64.b64encode(photo).decode()))
photo_merged = vision.result_merger({
    name: vision.matcher(vision.feature_extractor(photo_answer), name.split("-")[1])
    for name in ("db-employees", "db-visitors")
})
embedding = features["predictions"][0]["faces"][0]["embedding"]
print(json.dumps({
    "faces": [[f["box"] for f in p["faces"]] for p in detected["predictions"]],
    "sizes": [[p["width"], p["height"]] for p in detected["predictions"]],
    "crop_decodes": cv2.imdecode(
        __import__("numpy").frombuffer(base64.b64decode(detected["predictions"][0]["faces"][0]["crop"]["b64"]), "uint8"),
        cv2.IMREAD_COLOR).shape[:2],
    "cats": [[f["box"] for f in p["faces"]] for p in vision.cat_face_detector(request(chelsea, astronaut, rocket))["predictions"]],
    "people_on_cat": [f["box"] for f in vision.face_detector(request(chelsea))["predictions"][0]["faces"]],
    "embedding_len": len(embedding),
    "embedding_norm": sum(x * x for x in embedding) ** 0.5,
    "again_same": vision.feature_extractor(vision.face_detector(request(astronaut))) == vision.feature_extractor(detected | {"predictions": detected["predictions"][:1]}),
    "employees": employees,
    "visitors": visitors,
    "merged": merged,
    "photo_merged": photo_merged,
    "gallery_sizes": {k: len(v) for k, v in vision.galleries().items()},
    "errors": {
        "not base64": error(vision.face_detector, request("not base64!")),
        "not an image": error(vision.face_detector, request(base64.b64encode(b"hello").decode())),
        "no instances": error(vision.face_detector, {"inputs": []}),
        "no faces list": error(vision.feature_extractor, {"predictions": [{}]}),
        "short embedding": error(vision.MODELS["face-db-visitors"], {"predictions": [{"faces": [{"embedding": [1, 2]}]}]}),
        "not a matcher": error(vision.result_merger, {"db-employees": [1]}),
        "too many": error(vision.face_detector, {"instances": [1] * (vision.MAX_INSTANCES + 1)}),
    },
}))
"""


@pytest.fixture(scope="module")
def answers() -> dict[str, Any]:
    python = models_python()
    done = subprocess.run(
        [str(python), "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def near(box: list[int], expected: tuple[int, int, int, int], tolerance: int = 4) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(box, expected, strict=True))


def test_the_astronauts_face_is_found_where_it_is(answers: dict[str, Any]) -> None:
    astronaut, _rocket = answers["faces"]
    assert len(astronaut) == 1
    assert near(astronaut[0], (177, 66, 95, 95)), astronaut
    assert answers["sizes"][0] == [512, 512]
    assert answers["crop_decodes"] == [95, 95]  # the crop is the box, as a JPEG


def test_no_face_in_a_landscape(answers: dict[str, Any]) -> None:
    assert answers["faces"][1] == []  # the rocket on its launch pad
    assert answers["merged"]["predictions"][1] == {
        "instance": 1,
        "faces": [],
        "identities": [],
        "known_faces": 0,
    }


def test_the_cat_face_detector_finds_chelseas_face_and_no_cat_elsewhere(answers: dict[str, Any]) -> None:
    chelsea, astronaut, rocket = answers["cats"]
    assert len(chelsea) == 1
    assert near(chelsea[0], (214, 193, 100, 100)), chelsea
    assert astronaut == [] and rocket == []
    assert answers["people_on_cat"] == []  # and the person detector sees no person on the cat


def test_embeddings_are_normalised_hog_vectors_and_deterministic(answers: dict[str, Any]) -> None:
    assert answers["embedding_len"] == 324  # HOG of 32x32: 3x3 blocks of 2x2 cells of 9 orientations
    assert abs(answers["embedding_norm"] - 1.0) < 1e-4
    assert answers["again_same"] is True


def test_the_astronaut_is_an_employee_and_a_stranger_to_the_visitors(answers: dict[str, Any]) -> None:
    assert answers["gallery_sizes"] == {"employees": 51, "visitors": 50}
    match = answers["employees"]["predictions"][0]["matches"][0]
    assert match["name"] == "Eileen Collins" and match["distance"] == 0.0
    assert match["box"] == answers["faces"][0][0]
    visitor = answers["visitors"]["predictions"][0]["matches"][0]
    assert visitor["name"] is None and visitor["distance"] > 0.35 and visitor["nearest"].startswith("lfw-")
    (face,) = answers["merged"]["predictions"][0]["identities"]
    assert face == {
        "face": 0,
        "box": answers["faces"][0][0],
        "name": "Eileen Collins",
        "source": "employees",
        "distance": 0.0,
    }


def test_the_shipped_demo_photo_is_recognised_too(answers: dict[str, Any]) -> None:
    """The JPEG the studio's demo sends (models/samples/astronaut.jpg): lossy, still her."""
    (prediction,) = answers["photo_merged"]["predictions"]
    assert prediction["known_faces"] == 1
    assert prediction["identities"][0]["name"] == "Eileen Collins"
    assert near(prediction["identities"][0]["box"], (177, 66, 95, 95))
    assert (Path(ROOT) / "models/samples/astronaut.jpg").stat().st_size < 100_000


def test_bad_input_is_refused_with_what_and_where(answers: dict[str, Any]) -> None:
    errors = answers["errors"]
    assert errors["not base64"] == "face-detector: instances[0].image: the image is not valid base64"
    assert errors["not an image"].startswith(
        "face-detector: instances[0].image: the image could not be decoded"
    )
    assert "needs an 'instances'" in errors["no instances"]
    assert errors["no faces list"].startswith("feature-extractor: predictions[0] needs a 'faces' list")
    assert (
        errors["short embedding"] == "face-db-visitors: predictions[0].faces[0].embedding must be 324 numbers"
    )
    assert errors["not a matcher"].startswith("result-merger: 'db-employees' is not a matcher's answer")
    assert errors["too many"] == "face-detector: at most 16 instances per request, got 17"
