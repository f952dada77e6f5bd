"""The demo models of the mock model server (:mod:`execution.devtools.mockmodels`): deterministic
functions from a v1 request body to a v1 answer, importable without Django.

The demo models and the payloads they exchange (designed so the demo graphs flow with
``data: $response``; every model reads its items from ``instances`` or, when fed the previous
model's answer, from ``predictions``):

- ``face-detector``: ``{"instances": [{"image": ...}]}`` -> ``{"predictions": [{"faces": [{"face", "box",
  "score"}]}]}``; one to three boxes derived from a hash of each instance.
- ``feature-extractor``: the detector's answer -> ``{"predictions": [{"faces": [{"face", "box",
  "embedding"}]}]}``; the embedding is a function of the box (one of the known people, or a stranger).
- ``face-db-employees`` / ``face-db-visitors``: the extractor's answer -> ``{"predictions": [{"matches":
  [{"face", "name", "score"}]}], "database"}``: cosine similarity against a built-in database.
- ``result-merger``: the Ensemble's ``{"db-employees": ..., "db-visitors": ...}`` (any keys) ->
  ``{"predictions": [{"identities": [{"instance", "face", "name", "source", "score"}], "known_faces": n}]}``.
- ``cat-dog-classifier``: ``["cat"]`` or ``["dog"]`` per instance: an ``animal`` field decides, else a
  hash; ``dog-breed-classifier`` / ``cat-breed-classifier``: a breed per instance.
- ``sentiment-v1`` / ``sentiment-v2``: a label and the model version (the canary demo).
- ``echo`` (returns the request body byte for byte), ``echo-headers`` (the request headers it got;
  secret-looking values as ``sha256:<16 hex>``), ``always-404`` (``{"detail":"Intentional 404
  code"}``), ``success-200`` (``{"predictions":[{"message":"SUCCESS"}]}``).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Callable
from typing import Any

__all__ = [
    "MODELS",
    "ModelError",
    "cat_dog_classifier",
    "face_detector",
    "feature_extractor",
    "result_merger",
]

EMBEDDING_DIM = 8
# Cosine similarity a face needs to count as a match (the known embeddings carry noise of ~0.05).
MATCH_THRESHOLD = 0.9


class ModelError(Exception):
    """A model refused its input: answered with ``status`` and ``{"error": message}``."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _digest(value: Any) -> bytes:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "replace")).digest()


def _unit_vector(seed: str) -> list[float]:
    rng = random.Random(seed)
    vector = [rng.gauss(0.0, 1.0) for _ in range(EMBEDDING_DIM)]
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [round(x / norm, 6) for x in vector]


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    na = math.sqrt(sum(x * x for x in a)) or 1.0
    nb = math.sqrt(sum(y * y for y in b)) or 1.0
    return dot / (na * nb)


EMPLOYEES = ("Ada Lovelace", "Grace Hopper", "Alan Turing")
VISITORS = ("Katherine Johnson", "Edsger Dijkstra")
# People the extractor may "see": both databases plus strangers nobody knows.
PEOPLE = (*EMPLOYEES, *VISITORS, "stranger-1", "stranger-2")
PERSON_VECTORS = {name: _unit_vector(f"person:{name}") for name in PEOPLE}
DATABASES = {
    "employees": {name: PERSON_VECTORS[name] for name in EMPLOYEES},
    "visitors": {name: PERSON_VECTORS[name] for name in VISITORS},
}
DOG_BREEDS = ("golden-retriever", "beagle", "border-collie", "dachshund", "poodle")
CAT_BREEDS = ("siamese", "maine-coon", "persian", "bengal")


def _items(body: Any) -> list[Any]:
    """The list of items a v1 request carries: ``instances``, else ``predictions``, else the body."""
    if isinstance(body, dict):
        for key in ("instances", "predictions", "inputs"):
            if isinstance(body.get(key), list):
                return list(body[key])
        return [body]
    if isinstance(body, list):
        return body
    return [body]


def face_detector(body: Any) -> dict[str, Any]:
    predictions = []
    for index, item in enumerate(_items(body)):
        image = item.get("image", item) if isinstance(item, dict) else item
        digest = _digest(image)
        faces = []
        for face in range(1 + digest[0] % 3):
            x, y = digest[1 + face * 4] * 2, digest[2 + face * 4] * 2
            w = 40 + digest[3 + face * 4] % 80
            faces.append(
                {
                    "face": face,
                    "box": [x, y, w, w],
                    "score": round(0.8 + (digest[4 + face * 4] % 20) / 100, 2),
                }
            )
        predictions.append({"instance": index, "faces": faces})
    return {"predictions": predictions}


def _person_for_box(box: Any) -> str:
    return PEOPLE[_digest(box)[0] % len(PEOPLE)]


def feature_extractor(body: Any) -> dict[str, Any]:
    predictions = []
    for item in _items(body):
        faces = item.get("faces") if isinstance(item, dict) else None
        if not isinstance(faces, list):
            raise ModelError("feature-extractor expects detector output: items with a 'faces' list")
        out = []
        for face in faces:
            box = face.get("box") if isinstance(face, dict) else face
            base = PERSON_VECTORS[_person_for_box(box)]
            noise = _unit_vector(f"noise:{json.dumps(box)}")
            embedding = [round(b + 0.05 * n, 6) for b, n in zip(base, noise, strict=True)]
            out.append(
                {
                    "face": face.get("face") if isinstance(face, dict) else None,
                    "box": box,
                    "embedding": embedding,
                }
            )
        predictions.append({"faces": out})
    return {"predictions": predictions}


def _face_db(database: str) -> Callable[[Any], dict[str, Any]]:
    people = DATABASES[database]

    def match(body: Any) -> dict[str, Any]:
        predictions = []
        for item in _items(body):
            faces = item.get("faces") if isinstance(item, dict) else None
            if not isinstance(faces, list):
                raise ModelError(f"face-db-{database} expects extractor output: items with a 'faces' list")
            matches = []
            for face in faces:
                embedding = face.get("embedding") if isinstance(face, dict) else None
                if not isinstance(embedding, list) or len(embedding) != EMBEDDING_DIM:
                    raise ModelError(f"each face needs an embedding of {EMBEDDING_DIM} numbers")
                name, score = max(((n, _cosine(embedding, v)) for n, v in people.items()), key=lambda p: p[1])
                if score >= MATCH_THRESHOLD:
                    matches.append({"face": face.get("face"), "name": name, "score": round(score, 4)})
            predictions.append({"matches": matches})
        return {"database": database, "predictions": predictions}

    return match


def result_merger(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise ModelError("result-merger expects the Ensemble output: an object of database answers")
    identities: dict[tuple[int, Any], dict[str, Any]] = {}
    faces: set[tuple[int, Any]] = set()
    for source, answer in sorted(body.items()):
        if not isinstance(answer, dict):
            continue
        for index, prediction in enumerate(answer.get("predictions") or []):
            for match in (prediction or {}).get("matches") or []:
                key = (index, match.get("face"))
                faces.add(key)
                best = identities.get(key)
                if best is None or match.get("score", 0) > best["score"]:
                    identities[key] = {
                        "instance": index,
                        "face": match.get("face"),
                        "name": match.get("name"),
                        "source": answer.get("database", source),
                        "score": match.get("score", 0),
                    }
    ordered = [identities[k] for k in sorted(identities, key=lambda k: (k[0], str(k[1])))]
    return {"predictions": [{"identities": ordered, "known_faces": len(ordered)}]}


def _animal(item: Any) -> str:
    if isinstance(item, dict):
        hint = item.get("animal")
        if isinstance(hint, str) and hint.lower() in ("cat", "dog"):
            return hint.lower()
    return "dog" if _digest(item)[0] % 2 else "cat"


def cat_dog_classifier(body: Any) -> dict[str, Any]:
    return {"predictions": [_animal(item) for item in _items(body)]}


def _breeds(breeds: tuple[str, ...]) -> Callable[[Any], dict[str, Any]]:
    def classify(body: Any) -> dict[str, Any]:
        return {"predictions": [breeds[_digest(item)[1] % len(breeds)] for item in _items(body)]}

    return classify


def _sentiment(version: str) -> Callable[[Any], dict[str, Any]]:
    def classify(body: Any) -> dict[str, Any]:
        out = []
        for item in _items(body):
            digest = _digest(item)
            out.append(
                {
                    "label": "positive" if digest[0] % 2 else "negative",
                    "score": round(0.5 + digest[1] / 512, 3),
                    "model_version": version,
                }
            )
        return {"predictions": out}

    return classify


def success_200(body: Any) -> dict[str, Any]:
    return {"predictions": [{"message": "SUCCESS"}]}


# name -> v1 handler (parsed JSON in, JSON object out). ``echo`` and ``always-404`` are special.
MODELS: dict[str, Callable[[Any], dict[str, Any]] | None] = {
    "face-detector": face_detector,
    "feature-extractor": feature_extractor,
    "face-db-employees": _face_db("employees"),
    "face-db-visitors": _face_db("visitors"),
    "result-merger": result_merger,
    "cat-dog-classifier": cat_dog_classifier,
    "dog-breed-classifier": _breeds(DOG_BREEDS),
    "cat-breed-classifier": _breeds(CAT_BREEDS),
    "sentiment-v1": _sentiment("v1"),
    "sentiment-v2": _sentiment("v2"),
    "success-200": success_200,
    "echo": None,
    "echo-headers": None,
    "always-404": None,
}
