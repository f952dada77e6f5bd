"""The built-in mock model server: KServe v1/v2 paths, deterministic demo models, knobs."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from execution.devtools import mockmodels


@pytest.fixture
def client(mock_server: mockmodels.MockModelServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=mock_server.url, timeout=5) as c:
        yield c


def test_it_imports_without_django() -> None:
    code = "import sys, execution.devtools.mockmodels; assert 'django' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=".")


def test_v1_predict_and_model_status(client: httpx.Client) -> None:
    answer = client.post("/v1/models/success-200:predict", json={"instances": [1]})
    assert answer.status_code == 200 and answer.json() == {"predictions": [{"message": "SUCCESS"}]}
    assert client.get("/v1/models/echo").json() == {"name": "echo", "ready": True}
    assert client.post("/v1/models/always-404:predict", json={}).json() == {"detail": "Intentional 404 code"}
    missing = client.post("/v1/models/nope:predict", json={})
    assert missing.status_code == 404 and "does not exist" in missing.json()["error"]
    assert client.post("/v1/models/echo:predict", content=b"raw \x00 bytes").content == b"raw \x00 bytes"


def test_v2_infer_metadata_and_health(client: httpx.Client) -> None:
    inputs = [
        {"name": "x", "shape": [2], "datatype": "BYTES", "data": ['{"animal": "dog"}', '{"animal": "cat"}']}
    ]
    answer = client.post("/v2/models/cat-dog-classifier/infer", json={"id": "r1", "inputs": inputs}).json()
    assert answer["model_name"] == "cat-dog-classifier" and answer["id"] == "r1"
    assert answer["outputs"][0]["data"] == ["dog", "cat"] and answer["outputs"][0]["shape"] == [2]
    assert client.get("/v2/health/ready").json() == {"ready": True}
    assert client.get("/v2/models/face-detector").json()["name"] == "face-detector"
    assert client.post("/v2/models/echo/infer", json={"nope": 1}).status_code == 400


def test_the_face_pipeline_flows_with_response_data(client: httpx.Client) -> None:
    detected = client.post("/v1/models/face-detector:predict", json={"instances": [{"image": "a.jpg"}]})
    features = client.post("/v1/models/feature-extractor:predict", content=detected.content)
    employees = client.post("/v1/models/face-db-employees:predict", content=features.content).json()
    visitors = client.post("/v1/models/face-db-visitors:predict", content=features.content).json()
    merged = client.post(
        "/v1/models/result-merger:predict", json={"db-employees": employees, "db-visitors": visitors}
    ).json()
    names = {m["name"] for p in employees["predictions"] + visitors["predictions"] for m in p["matches"]}
    assert {i["name"] for i in merged["predictions"][0]["identities"]} == names
    again = client.post("/v1/models/face-detector:predict", json={"instances": [{"image": "a.jpg"}]})
    assert again.content == detected.content  # deterministic
    bad = client.post("/v1/models/feature-extractor:predict", json={"instances": [1]})
    assert bad.status_code == 400


def test_knobs_from_the_query_and_the_server_config(
    client: httpx.Client, mock_server: mockmodels.MockModelServer
) -> None:
    assert client.post("/v1/models/echo:predict?status=503", json={}).status_code == 503
    slow = client.post("/v1/models/echo:predict?latency_ms=120", json={})
    assert slow.elapsed.total_seconds() >= 0.12
    statuses = [
        client.post("/v1/models/success-200:predict?failure_rate=0.5&seed=7", json={}).status_code
        for _ in range(20)
    ]
    assert {200, 503} == set(statuses)
    assert client.put("/_mock/config/echo-headers", json={"error_status": 418}).status_code == 200
    assert client.post("/v1/models/echo-headers:predict", json={}).status_code == 418
    mock_server.set_config("echo-headers", None)
    assert client.post("/v1/models/echo-headers:predict", json={}).status_code == 200
    assert client.post("/v1/models/echo:predict?latency_ms=abc", json={}).status_code == 400


def test_accepted_sockets_have_nagle_disabled(mock_server: mockmodels.MockModelServer) -> None:
    captured = []
    original = mock_server.get_request

    def spy() -> tuple[socket.socket, object]:
        conn, address = original()
        captured.append(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        return conn, address

    mock_server.get_request = spy  # type: ignore[method-assign]
    try:
        httpx.post(mock_server.url + "/v1/models/echo:predict", content=b"{}")
    finally:
        del mock_server.get_request
    assert captured and captured[0] != 0


def test_keep_alive_serves_many_requests_on_one_connection(mock_server: mockmodels.MockModelServer) -> None:
    with socket.create_connection(("127.0.0.1", mock_server.port)) as conn:
        for _ in range(3):
            conn.sendall(b"POST /v1/models/echo:predict HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
            data = b""
            while not data.endswith(b"{}"):
                data += conn.recv(4096)
            assert data.startswith(b"HTTP/1.1 200")
