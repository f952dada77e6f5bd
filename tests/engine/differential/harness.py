"""Send the same requests to KServe's router (the oracle binary) and to the engine; compare answers.

Per case the oracle runs as a child process started as KServe's controller starts it
(``--graph-json`` with ``serviceName``s resolved, ``PROPAGATE_HEADERS``, ``ORACLE_PORT``), and the
engine runs as ``servegraph`` serves it: :class:`execution.engine.server.GraphServer` with the
configuration ``servegraph`` builds from its options (:func:`execution.management.cli.engine_config`: KServe
behaviour, URL guard allowing loopback and private addresses, ``--service`` for each name). The
one difference from ``servegraph``: the manifest is not validated first, because KServe's router
runs graphs its webhook would refuse (weights not summing to 100, duplicate step names).

An answer is compared on status, Content-Type and body bytes. A case with a Splitter is random in
KServe (``crypto/rand``), so its answers are compared as *sets*: the oracle is sampled until its
reachable answers are seen, the engine (seeded) likewise, and both sets must be equal.
A case with an Ensemble of several steps is *timed*: the generator orders its step answers by delays
(generator.py), and a stall of the process that serves the steps or the engine (a garbage
collection on a loaded machine) can deliver two of them at once, in either order, to either router.
Such a comparison that diverges is run again, up to :data:`REPLAYS` times, and counts with the first
verdict that is not a divergence; the report says how many needed a replay.
Where the oracle closes the connection without an answer, KServe crashed or panicked on that
request; the engine must answer 500 with a cause naming the problem (docs/router-semantics.md,
"Deliberate deviations"), which :func:`is_deviation_answer` checks.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import socket
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Final, Literal

from execution.engine.server import GraphServer
from execution.management.cli import engine_config
from graphs.language import API_VERSION, KIND, manifest_from_document
from graphs.language.releases import DEFAULT_RELEASE, Release
from tests.engine.differential.generator import Case, Request, materialize, oracle_spec

__all__ = [
    "ORACLE_DIR",
    "Comparison",
    "Environment",
    "Reply",
    "compare_case",
    "is_deviation_answer",
    "oracle_binary",
    "with_replays",
]

# ``$KSERVE_ORACLE_DIR`` overrides the place (a git worktree is not beside ``shared/``).
ORACLE_DIR: Final = Path(
    os.environ.get("KSERVE_ORACLE_DIR") or Path(__file__).resolve().parents[3].parent / "shared" / "oracle"
)
# Go's default goroutine stack limit is 1 GB; an infinitely recursing graph would take seconds and
# a gigabyte to crash. 1 MiB still allows hundreds of nested node calls (a level takes under 3 KiB
# of stack in the oracle's traces), far beyond the dozen of the deepest normal case.
ORACLE_MAX_STACK: Final = 1024 * 1024
# Nothing in a generated case takes more than a second; a request still open after this is a hang.
REQUEST_TIMEOUT_S: Final = 20.0
# Outcome sets: the first batch per side and request, each later batch, and the cap per side.
SAMPLES_FIRST: Final = 16
SAMPLES_MORE: Final = 16
SAMPLES_CAP: Final = 400
# A side keeps sampling while an answer only the other side gave could still have been missed by
# chance, i.e. while (1 - p) ** n > MISS_CHANCE after n samples. Every reachable answer is at least
# MIN_SHARE likely (pools.WEIGHTS), and p is taken as that, not as the share the other side
# observed: 16 samples overstate a 30 % answer as 50 % often enough (and the engine's draws are
# seeded, so a run of draws without it repeats), and stopping on that share reported divergences
# that were sampling accidents. A true answer is missed with probability < 1e-4.
MISS_CHANCE: Final = 1e-4
MIN_SHARE: Final = 0.04
# From v0.13 to v0.18 the Splitter draws 0 to 100, and a draw of 100 with weights summing to 100
# finds no route (KServe crashes): that answer is 1 in 101 likely, and takes more samples to see.
RARE_SHARE: Final = 1 / 101
RARE_CAP: Final = 1000
# A timed case's divergence is run again this many times at most. Stalls long enough to reorder the
# answers (tens of ms) are rare: the same request diverging on every replay is not a stall.
REPLAYS: Final = 3

# The causes the engine gives where KServe's router crashes or drops the connection
# (docs/router-semantics.md, "Deliberate deviations").
_DEVIATION_CAUSE: Final = re.compile(
    r'cycle detected: \S.*|node ".+" has no steps|node calls nested deeper than \d+ levels \(a loop\?\)'
    r'|step .+ of Splitter node ".+" has no weight'
    r"|.+ \(KServe \S+ crashes here and closes the connection\)"
)
_ERROR_BODY: Final = re.compile(rb'\{"error":"Failed to process request","cause":(".*")\}')


@dataclass(frozen=True, slots=True)
class Reply:
    """One observed answer; ``dropped`` says why there was none (the connection closed)."""

    status: int | None
    content_type: str | None
    body: bytes
    dropped: str | None = None

    def cause(self) -> str | None:
        """The cause of the router's error JSON, or None if the body is not one."""
        match = _ERROR_BODY.fullmatch(self.body)
        if match is None:
            return None
        try:
            value = json.loads(match.group(1))
        except ValueError:
            return None
        return value if isinstance(value, str) else None

    def show(self) -> str:
        if self.dropped:
            return f"no answer ({self.dropped})"
        body = self.body.decode("utf-8", "backslashreplace")
        if len(body) > 300:
            body = body[:300] + "…"
        return f"{self.status} [{self.content_type}] {body}"

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "content_type": self.content_type,
            "body": self.body.decode("utf-8", "backslashreplace"),
            "body_hex": self.body.hex(),
            "dropped": self.dropped,
        }


def is_deviation_answer(reply: Reply) -> bool:
    """The engine's documented answer where KServe crashes: 500, JSON, a cause naming the problem."""
    cause = reply.cause()
    return (
        reply.status == 500
        and reply.content_type == "application/json"
        and cause is not None
        and _DEVIATION_CAUSE.fullmatch(cause) is not None
    )


def send(port: int, request: Request, timeout: float = REQUEST_TIMEOUT_S) -> Reply:
    """Send ``request`` to ``127.0.0.1:port`` on a fresh connection and read the whole answer."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.putrequest(request.method, "/", skip_accept_encoding=True)
        for name, value in request.headers:
            conn.putheader(name, value)
        conn.putheader("Content-Length", str(len(request.body)))
        conn.endheaders(request.body)
        response = conn.getresponse()
        body = response.read()
        return Reply(response.status, response.getheader("Content-Type"), body)
    except (http.client.HTTPException, ConnectionError) as exc:
        return Reply(None, None, b"", dropped=type(exc).__name__)
    except TimeoutError:
        return Reply(None, None, b"", dropped=f"no answer within {timeout:g} s")
    finally:
        conn.close()


def oracle_binary(release: Release, oracle_dir: Path = ORACLE_DIR) -> Path:
    """Where ``release``'s router build is: ``releases/<tag>/kserve-router``, master at the top."""
    if not release.oracle:
        return oracle_dir / "kserve-router"
    return oracle_dir / "releases" / release.oracle / "kserve-router"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Oracle:
    """KServe's router for one graph, restarted on demand after a crash."""

    def __init__(self, binary: Path, spec: dict[str, Any], propagate: str, *, readyz: bool = True) -> None:
        self._binary = binary
        # Before v0.15 there is no /readyz (it runs the graph): readiness is a TCP connect.
        self._readyz = readyz
        self._graph = json.dumps(spec, separators=(",", ":"))
        self._propagate = propagate
        self._proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.crashes = 0

    def start(self) -> None:
        for _attempt in range(5):
            self.port = _free_port()
            env = {
                "PATH": os.environ.get("PATH", ""),
                "ORACLE_PORT": str(self.port),
                "ORACLE_MAX_STACK": str(ORACLE_MAX_STACK),
            }
            # KServe's controller sets PROPAGATE_HEADERS only when router.headers.propagate is
            # configured; an empty value would compile to the regex "" and forward every header.
            if self._propagate:
                env["PROPAGATE_HEADERS"] = self._propagate
            self._proc = subprocess.Popen(
                [str(self._binary), "--graph-json", self._graph],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            if self._wait_ready():
                return
            self.stop()
        raise RuntimeError("the oracle router did not start (5 attempts)")

    def _ready(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
                if not self._readyz:
                    return True
                sock.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                return sock.recv(64).startswith(b"HTTP/1.1 200")
        except OSError:
            return False

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self._proc is None or self._proc.poll() is not None:
                return False
            if self._ready():
                return True
            time.sleep(0.01)
        return False

    def ask(self, request: Request) -> Reply:
        reply = send(self.port, request)
        if reply.dropped == "ConnectionRefusedError":
            # The process was still dying of an earlier request when that one was checked (a TCP
            # connect, the only probe before v0.15, can still succeed then): this request never
            # reached it. Start it again and ask once more.
            self.crashes += 1
            self.stop()
            self.start()
            reply = send(self.port, request)
        if reply.dropped and not self._ready():
            # A fatal stack overflow kills the process (its listener is gone); a panic inside a
            # handler only closes that connection.
            self.crashes += 1
            self.stop()
            self.start()
        return reply

    def stop(self) -> None:
        if self._proc is not None:
            # SIGKILL, not SIGTERM: on SIGTERM KServe's router fails readiness and sleeps 30 s.
            self._proc.kill()
            self._proc.wait()
        self._proc = None


class Engine:
    """The studio's engine serving one graph as ``servegraph`` does, on a free loopback port."""

    def __init__(
        self, case: Case, spec: dict[str, Any], services: dict[str, str], seed: int, release: Release
    ) -> None:
        document = {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "metadata": {"name": f"diff-{case.case_id}", "namespace": "default"},
            "spec": spec,
        }
        options = {
            # As the oracle is started: an empty value means PROPAGATE_HEADERS is not set at all.
            "propagate_headers": case.propagate or None,
            "service": [f"{name}={url}" for name, url in services.items()],
            "url_template": None,
        }
        self._server = GraphServer(
            manifest_from_document(document),
            engine_config(options, release=release),
            port=0,
            rng=random.Random(seed),
        )

    def start(self) -> None:
        self._server.start()

    def ask(self, request: Request) -> Reply:
        return send(self._server.port, request)

    def stop(self) -> None:
        self._server.stop()


@dataclass(frozen=True, slots=True)
class Environment:
    """Where the servers of a run are: the oracle binary, the behaviour server, the refused port."""

    oracle: Path
    step_host: str
    refused_host: str
    seed: int
    release: Release = DEFAULT_RELEASE

    @property
    def min_share(self) -> float:
        return RARE_SHARE if self.release.splitter_draw == "0-100" else MIN_SHARE

    @property
    def samples_cap(self) -> int:
        return RARE_CAP if self.release.splitter_draw == "0-100" else SAMPLES_CAP


Outcome = Literal["match", "divergence", "deviation", "deviation-wrong"]


@dataclass(slots=True)
class Comparison:
    """The verdict on one request of one case.

    ``oracle`` and ``engine`` hold every distinct answer seen (one each for a deterministic case).
    ``outcome``: ``match``; ``divergence``; ``deviation`` (the oracle dropped the connection and
    the engine gave its documented answer); ``deviation-wrong`` (it dropped it and the engine did
    not). ``replays``: how many times a timed case was compared again after a divergence.
    """

    case: Case
    index: int
    outcome: Outcome
    oracle: list[Reply] = field(default_factory=list)
    engine: list[Reply] = field(default_factory=list)
    sent: int = 0
    replays: int = 0

    @property
    def request(self) -> Request:
        return self.case.requests[self.index]


def _key(reply: Reply, *, engine: bool) -> Reply:
    """Deviation answers of either side collapse into one token for outcome-set comparison."""
    if (not engine and reply.dropped) or (engine and is_deviation_answer(reply)):
        return Reply(None, None, b"", dropped="deviation")
    return reply


def _sample(
    side: Oracle | Engine, request: Request, count: int, seen: dict[Reply, list[Reply]], engine: bool
) -> int:
    for _ in range(count):
        reply = side.ask(request)
        seen.setdefault(_key(reply, engine=engine), []).append(reply)
    return count


def _may_have_missed(
    mine: dict[Reply, list[Reply]],
    theirs: dict[Reply, list[Reply]],
    min_share: float = MIN_SHARE,
    cap: int = SAMPLES_CAP,
) -> bool:
    """True while an answer only the other side gave could still be a sampling accident here."""
    drawn = sum(len(v) for v in mine.values())
    if drawn >= cap or not theirs.keys() - mine.keys():
        return False
    return (1 - min_share) ** drawn > MISS_CHANCE


def _compare_random(
    case: Case,
    index: int,
    oracle: Oracle,
    engine: Engine,
    min_share: float = MIN_SHARE,
    cap: int = SAMPLES_CAP,
) -> Comparison:
    request = case.requests[index]
    seen_o: dict[Reply, list[Reply]] = {}
    seen_e: dict[Reply, list[Reply]] = {}
    sent = _sample(oracle, request, SAMPLES_FIRST, seen_o, False)
    sent += _sample(engine, request, SAMPLES_FIRST, seen_e, True)
    while True:
        need_o = _may_have_missed(seen_o, seen_e, min_share, cap)
        need_e = _may_have_missed(seen_e, seen_o, min_share, cap)
        if not need_o and not need_e:
            break
        if need_o:
            sent += _sample(oracle, request, SAMPLES_MORE, seen_o, False)
        if need_e:
            sent += _sample(engine, request, SAMPLES_MORE, seen_e, True)
    same = seen_o.keys() == seen_e.keys()
    has_dev = any(k.dropped for k in seen_o)
    outcome: Outcome = ("deviation" if has_dev else "match") if same else "divergence"
    return Comparison(
        case, index, outcome, [v[0] for v in seen_o.values()], [v[0] for v in seen_e.values()], sent
    )


def _compare_once(case: Case, index: int, oracle: Oracle, engine: Engine) -> Comparison:
    request = case.requests[index]
    o = oracle.ask(request)
    e = engine.ask(request)
    if o.dropped:
        outcome: Outcome = "deviation" if is_deviation_answer(e) else "deviation-wrong"
    else:
        outcome = "match" if o == e else "divergence"
    return Comparison(case, index, outcome, [o], [e], 2)


def with_replays(compare: Callable[[], Comparison], timed: bool) -> Comparison:
    """``compare()``, run again while it diverges on a timed case (at most :data:`REPLAYS` times).

    A divergence that lasts through every replay is reported as first seen; otherwise the first
    verdict that is not a divergence counts. Either way the HTTP requests of every attempt are
    counted in ``sent``.
    """
    first = compare()
    if first.outcome != "divergence" or not timed:
        return first
    sent = first.sent
    for replay in range(1, REPLAYS + 1):
        again = compare()
        sent += again.sent
        if again.outcome != "divergence":
            again.sent, again.replays = sent, replay
            return again
    first.sent, first.replays = sent, REPLAYS
    return first


def compare_case(case: Case, env: Environment, indices: Iterable[int] | None = None) -> list[Comparison]:
    """Run ``case`` on a fresh oracle and engine; one :class:`Comparison` per request.

    Starts and stops one oracle process and one engine server; raises RuntimeError only if the
    oracle cannot start at all.
    """
    spec = materialize(case.spec, env.step_host, env.refused_host)
    services = materialize(case.services, env.step_host, env.refused_host)
    resolved = Case(case.case_id, case.kind, spec, services, case.propagate, case.requests, case.note)
    oracle = Oracle(env.oracle, oracle_spec(resolved), case.propagate, readyz=env.release.readyz)
    seed = random.Random(f"{env.seed}/{case.case_id}").randrange(2**32)
    engine = Engine(case, spec, services, seed, env.release)
    oracle.start()
    engine.start()
    try:
        chosen = range(len(case.requests)) if indices is None else indices
        if case.random:
            compare = partial(
                _compare_random,
                case,
                oracle=oracle,
                engine=engine,
                min_share=env.min_share,
                cap=env.samples_cap,
            )
        else:
            compare = partial(_compare_once, case, oracle=oracle, engine=engine)
        return [with_replays(partial(compare, index=i), case.timed) for i in chosen]
    finally:
        engine.stop()
        oracle.stop()
