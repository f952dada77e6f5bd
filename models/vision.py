"""The demo's real models, as plain functions of JSON-able values (no server needed to test them).

Everything here ships inside the packages of ``models/requirements.txt``; nothing is downloaded:

- the face detector is OpenCV's frontal-face Haar cascade (``cv2.data.haarcascades``), the cat-face
  detector its extended cat-face cascade;
- the embedder is a HOG descriptor (scikit-image) of the face crop at 32x32 grey pixels, L2-normalised;
- the galleries ("employees", "visitors") are built at start from the 100 face crops
  ``skimage.data.lfw_subset()`` ships and from the face the detector finds on ``astronaut()``
  (Eileen Collins, NASA), who is an employee.

Images travel as KServe's v1 convention for binary data: ``{"image": {"b64": "<base64>"}}`` (any
format OpenCV decodes: JPEG, PNG, BMP…). Every answer is a pure function of its input: the same
photo gives the same bytes, whoever calls.
"""

from __future__ import annotations

import base64
import binascii
import math
import os
from functools import cache
from typing import Any

MAX_PIXELS = 4096 * 4096  # one decoded image
# OpenCV refuses, from the header and before decoding, an image with more pixels than this.
os.environ.setdefault("OPENCV_IO_MAX_IMAGE_PIXELS", str(MAX_PIXELS))

import cv2  # noqa: E402
import numpy as np  # noqa: E402
from skimage import data as skdata  # noqa: E402
from skimage.feature import hog  # noqa: E402

# Bounds on what one request may make the models do.
MAX_IMAGE_BYTES = 8 * 1024 * 1024  # one encoded image
MAX_INSTANCES = 16  # images in one request
MAX_FACES = 64  # faces kept per image (the largest first)

EMBED_SIZE = 32  # face crops are embedded at EMBED_SIZE x EMBED_SIZE grey pixels
# Euclidean distance between two normalised embeddings under which a face counts as that person.
MATCH_DISTANCE = 0.35
DECIMALS = 6  # embeddings and distances are rounded: the same answer on every machine


class ModelInputError(ValueError):
    """The request is not what the model takes; the message says what and where."""


def _items(body: Any, model: str) -> list[Any]:
    """The items of a v1 request: ``instances``, else the previous model's ``predictions``."""
    if isinstance(body, dict):
        for key in ("instances", "predictions"):
            if key in body:
                items = body[key]
                if not isinstance(items, list):
                    raise ModelInputError(f"{model}: {key!r} must be a list")
                if len(items) > MAX_INSTANCES:
                    raise ModelInputError(
                        f"{model}: at most {MAX_INSTANCES} {key} per request, got {len(items)}"
                    )
                return items
    raise ModelInputError(f"{model}: the request needs an 'instances' (or 'predictions') list")


def decode_image(value: Any, where: str) -> np.ndarray:
    """A BGR image from ``{"b64": …}`` (or a bare base64 string)."""
    b64 = value.get("b64") if isinstance(value, dict) else value
    if not isinstance(b64, str):
        raise ModelInputError(f'{where}: expected an image as {{"b64": "<base64>"}}')
    if len(b64) > MAX_IMAGE_BYTES * 4 // 3 + 4:
        raise ModelInputError(f"{where}: the image is larger than {MAX_IMAGE_BYTES} bytes")
    if b64.startswith("data:") and "," in b64:  # a data: URL, as a browser reads a file
        b64 = b64.split(",", 1)[1]
    try:
        raw = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ModelInputError(f"{where}: the image is not valid base64") from exc
    buffer = np.frombuffer(raw, dtype=np.uint8)
    image = cv2.imdecode(buffer, cv2.IMREAD_COLOR) if buffer.size else None
    if image is None:
        raise ModelInputError(f"{where}: the image could not be decoded (JPEG, PNG, BMP… expected)")
    if image.shape[0] * image.shape[1] > MAX_PIXELS:
        raise ModelInputError(f"{where}: the image has more than {MAX_PIXELS} pixels")
    return image


def encode_jpeg(image: np.ndarray) -> str:
    ok, buffer = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])
    if not ok:  # pragma: no cover - OpenCV encodes any non-empty uint8 image
        raise RuntimeError("JPEG encoding failed")
    return base64.b64encode(buffer.tobytes()).decode("ascii")


@cache
def _cascade(filename: str) -> cv2.CascadeClassifier:
    cascade = cv2.CascadeClassifier(cv2.data.haarcascades + filename)
    if cascade.empty():  # pragma: no cover - the wheel ships it
        raise RuntimeError(f"OpenCV's {filename} is missing from this installation")
    return cascade


def _detect(image: np.ndarray, cascade: str, min_neighbors: int) -> list[list[int]]:
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    found = _cascade(cascade).detectMultiScale(
        grey, scaleFactor=1.1, minNeighbors=min_neighbors, minSize=(30, 30)
    )
    boxes = [[int(v) for v in box] for box in found]
    boxes.sort(key=lambda b: (-b[2] * b[3], b[1], b[0]))  # the largest first, then top-left first
    return sorted(boxes[:MAX_FACES], key=lambda b: (b[0], b[1]))


def _detector(body: Any, model: str, cascade: str, min_neighbors: int, crops: bool) -> dict[str, Any]:
    predictions = []
    for index, item in enumerate(_items(body, model)):
        where = f"{model}: instances[{index}]"
        value = item.get("image") if isinstance(item, dict) and "image" in item else item
        image = decode_image(value, where + ".image")
        faces = []
        for number, (x, y, w, h) in enumerate(_detect(image, cascade, min_neighbors)):
            face: dict[str, Any] = {"face": number, "box": [x, y, w, h]}
            if crops:
                face["crop"] = {"b64": encode_jpeg(image[y : y + h, x : x + w])}
            faces.append(face)
        predictions.append(
            {"instance": index, "width": int(image.shape[1]), "height": int(image.shape[0]), "faces": faces}
        )
    return {"predictions": predictions}


def face_detector(body: Any) -> dict[str, Any]:
    """``{"instances": [{"image": {"b64"}}]}`` -> per image ``{"instance", "width", "height", "faces":
    [{"face", "box": [x, y, w, h], "crop": {"b64": JPEG}}]}`` (OpenCV's frontal-face cascade)."""
    return _detector(body, "face-detector", "haarcascade_frontalface_default.xml", 5, crops=True)


def cat_face_detector(body: Any) -> dict[str, Any]:
    """The same for cats' faces (OpenCV's extended frontal cat-face cascade), boxes only."""
    return _detector(body, "cat-face-detector", "haarcascade_frontalcatface_extended.xml", 3, crops=False)


def embed_grey(grey: np.ndarray) -> list[float]:
    """The HOG descriptor of a grey face crop (any size), L2-normalised and rounded."""
    small = cv2.resize(grey, (EMBED_SIZE, EMBED_SIZE), interpolation=cv2.INTER_AREA)
    vector = hog(small, orientations=9, pixels_per_cell=(8, 8), cells_per_block=(2, 2), feature_vector=True)
    norm = float(np.linalg.norm(vector)) or 1.0
    return [round(float(v) / norm, DECIMALS) for v in vector]


def feature_extractor(body: Any) -> dict[str, Any]:
    """The detector's answer -> per image ``{"instance", "faces": [{"face", "box", "embedding"}]}``."""
    predictions = []
    for index, item in enumerate(_items(body, "feature-extractor")):
        faces = item.get("faces") if isinstance(item, dict) else None
        if not isinstance(faces, list):
            raise ModelInputError(
                f"feature-extractor: predictions[{index}] needs a 'faces' list (the detector's answer)"
            )
        out = []
        for number, face in enumerate(faces[:MAX_FACES]):
            where = f"feature-extractor: predictions[{index}].faces[{number}]"
            if not isinstance(face, dict) or "crop" not in face:
                raise ModelInputError(f"{where} needs a 'crop' image")
            crop = decode_image(face["crop"], where + ".crop")
            grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
            out.append(
                {"face": face.get("face", number), "box": face.get("box"), "embedding": embed_grey(grey)}
            )
        predictions.append({"instance": item.get("instance", index), "faces": out})
    return {"predictions": predictions}


@cache
def galleries() -> dict[str, dict[str, np.ndarray]]:
    """The two galleries, name -> embedding: built once, from the images scikit-image ships."""
    lfw = skdata.lfw_subset()[:100]  # the first 100 are faces (the rest are not)
    grey = [np.clip(face * 255.0 + 0.5, 0, 255).astype(np.uint8) for face in lfw]
    astronaut = cv2.cvtColor(skdata.astronaut(), cv2.COLOR_RGB2BGR)
    (x, y, w, h), *_ = _detect(astronaut, "haarcascade_frontalface_default.xml", 5)
    # The crop as the detector sends it (JPEG), so her photo finds her at distance 0.
    crop = decode_image(encode_jpeg(astronaut[y : y + h, x : x + w]), "astronaut")
    employees = {"Eileen Collins": embed_grey(cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY))}
    employees.update({f"lfw-{n:03d}": embed_grey(grey[n]) for n in range(50)})
    visitors = {f"lfw-{n:03d}": embed_grey(grey[n]) for n in range(50, 100)}
    return {
        name: {person: np.asarray(vector, dtype=np.float64) for person, vector in gallery.items()}
        for name, gallery in (("employees", employees), ("visitors", visitors))
    }


def matcher(body: Any, database: str) -> dict[str, Any]:
    """The extractor's answer -> per image ``{"instance", "matches": [{"face", "box", "name",
    "distance"}]}``: each face's nearest person in the gallery and the distance to them; ``name`` is
    null when even the nearest is farther than MATCH_DISTANCE."""
    gallery = galleries()[database]
    names = list(gallery)
    matrix = np.stack([gallery[name] for name in names])
    model = f"face-db-{database}"
    predictions = []
    for index, item in enumerate(_items(body, model)):
        faces = item.get("faces") if isinstance(item, dict) else None
        if not isinstance(faces, list):
            raise ModelInputError(
                f"{model}: predictions[{index}] needs a 'faces' list (the extractor's answer)"
            )
        matches = []
        for number, face in enumerate(faces[:MAX_FACES]):
            vector = face.get("embedding") if isinstance(face, dict) else None
            if not isinstance(vector, list) or len(vector) != matrix.shape[1]:
                raise ModelInputError(
                    f"{model}: predictions[{index}].faces[{number}].embedding must be {matrix.shape[1]} numbers"
                )
            try:
                query = np.asarray(vector, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise ModelInputError(
                    f"{model}: predictions[{index}].faces[{number}].embedding must be numbers"
                ) from exc
            distances = np.linalg.norm(matrix - query, axis=1)
            best = int(np.argmin(distances))
            distance = round(float(distances[best]), DECIMALS)
            if not math.isfinite(distance):
                raise ModelInputError(
                    f"{model}: predictions[{index}].faces[{number}].embedding must be finite"
                )
            matches.append(
                {
                    "face": face.get("face", number),
                    "box": face.get("box"),
                    "name": names[best] if distance <= MATCH_DISTANCE else None,
                    "nearest": names[best],
                    "distance": distance,
                }
            )
        predictions.append({"instance": item.get("instance", index), "matches": matches})
    return {"predictions": predictions, "database": database}


def result_merger(body: Any) -> dict[str, Any]:
    """The Ensemble's ``{"<step>": <matcher answer>, …}`` -> per image one answer per face: the
    closest match over every gallery (``name`` null for a stranger), and the known ones as
    ``identities``."""
    if not isinstance(body, dict) or not body:
        raise ModelInputError("result-merger: expected the Ensemble's answer, an object of matcher answers")
    per_image: dict[int, dict[int, dict[str, Any]]] = {}
    for step in sorted(body):
        answer = body[step]
        if not isinstance(answer, dict) or not isinstance(answer.get("predictions"), list):
            raise ModelInputError(
                f"result-merger: {step!r} is not a matcher's answer (no 'predictions' list)"
            )
        source = answer.get("database", step)
        for index, item in enumerate(answer["predictions"]):
            matches = item.get("matches") if isinstance(item, dict) else None
            if not isinstance(matches, list):
                raise ModelInputError(f"result-merger: {step}.predictions[{index}] needs a 'matches' list")
            faces = per_image.setdefault(_index(item.get("instance"), index), {})
            for number, match in enumerate(matches):
                if not isinstance(match, dict):
                    raise ModelInputError(
                        f"result-merger: {step}.predictions[{index}].matches[{number}] is not an object"
                    )
                key = _index(match.get("face"), number)
                candidate = {
                    "face": key,
                    "box": match.get("box"),
                    "name": match.get("name"),
                    "source": source if match.get("name") is not None else None,
                    "distance": match.get("distance"),
                }
                held = faces.get(key)
                if held is None or _better(candidate, held):
                    faces[key] = candidate
    predictions = []
    for instance in sorted(per_image):
        answers = [per_image[instance][key] for key in sorted(per_image[instance])]
        identities = [face for face in answers if face["name"] is not None]
        predictions.append(
            {"instance": instance, "faces": answers, "identities": identities, "known_faces": len(identities)}
        )
    return {"predictions": predictions}


def _index(value: Any, default: int) -> int:
    """An instance or face number as sent, or its position when it is not a plain integer."""
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _better(candidate: dict[str, Any], held: dict[str, Any]) -> bool:
    """A named match beats an unnamed one; between equals, the smaller distance."""
    if (candidate["name"] is None) != (held["name"] is None):
        return candidate["name"] is not None
    a, b = candidate["distance"], held["distance"]
    return isinstance(a, int | float) and (not isinstance(b, int | float) or a < b)


MODELS = {
    "face-detector": face_detector,
    "feature-extractor": feature_extractor,
    "face-db-employees": lambda body: matcher(body, "employees"),
    "face-db-visitors": lambda body: matcher(body, "visitors"),
    "result-merger": result_merger,
    "cat-face-detector": cat_face_detector,
}
