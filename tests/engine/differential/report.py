"""Group divergences into classes, shrink one example per class, write them out, print the table.

A class is a short signature of *how* the two answers differ, with run-specific details (ports,
node names, JSON offsets) replaced by placeholders, so that one engine defect gives one class.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from tests.engine.differential.conditions import ConditionDivergence
from tests.engine.differential.generator import Case, Request, oracle_spec
from tests.engine.differential.harness import Comparison, Reply

__all__ = ["DivergenceClass", "classify", "condition_table", "signature", "table", "write_artifacts"]

_TEMPLATES: Final = (
    (re.compile(r"https?://127\.0\.0\.1:\d+(/\S*?)?(?=[\"\s]|\\\"|$)"), "<url>"),
    (re.compile(r"127\.0\.0\.1:\d+"), "<host>"),
    (re.compile(r"cycle detected: .*"), "cycle detected: <path>"),
    (re.compile(r'node "[^"]*"'), 'node "<n>"'),
    (re.compile(r"offset \d+"), "offset <n>"),
)


def _template(cause: str) -> str:
    for pattern, placeholder in _TEMPLATES:
        cause = pattern.sub(placeholder, cause)
    return cause


def _json_value(body: bytes) -> tuple[bool, Any]:
    try:
        return True, json.loads(body, parse_float=float, parse_constant=lambda c: None)
    except ValueError:
        return False, None


def _describe(reply: Reply) -> str:
    if reply.dropped:
        return "no answer"
    cause = reply.cause()
    if cause is not None:
        return f"{reply.status} {_template(cause)!r}"
    if not reply.body:
        return f"{reply.status} empty"
    valid, _ = _json_value(reply.body)
    return f"{reply.status} {'json' if valid else 'non-json'}"


def _conditions(case: Case) -> list[str]:
    """The conditions a router evaluates (Switch and Sequence steps), in graph order."""
    found: list[str] = []
    for node in case.spec["nodes"].values():
        if node.get("routerType") in ("Switch", "Sequence"):
            found += [s["condition"] for s in node.get("steps", []) if s.get("condition")]
    return found


def signature(comparison: Comparison, suspects: frozenset[str] = frozenset()) -> str:
    """The class of a non-matching comparison (how the oracle and engine answers differ).

    A graph that evaluates one of ``suspects`` (conditions on which Go gjson and the engine's
    evaluator already disagree, see :mod:`.conditions`) goes into one class: its divergence most
    likely follows from the condition, which the conditions table pins down exactly; fixing the
    evaluator settles the class, and a rerun shows whatever it was hiding.
    """
    o_all, e_all = comparison.oracle, comparison.engine
    if comparison.outcome != "deviation-wrong" and suspects.intersection(_conditions(comparison.case)):
        return "graph evaluates a condition on which gjson and the engine disagree (conditions table)"
    if comparison.outcome == "deviation-wrong":
        return f"KServe drops the connection; engine answers {_describe(e_all[0])}, not 500 with the deviation cause"
    if len(o_all) > 1 or len(e_all) > 1:
        return _outcome_sets(o_all, e_all)
    return _single(o_all[0], e_all[0])


def _outcome_sets(o_all: list[Reply], e_all: list[Reply]) -> str:
    only_o = sorted({_describe(r) for r in o_all} - {_describe(r) for r in e_all})
    only_e = sorted({_describe(r) for r in e_all} - {_describe(r) for r in o_all})
    if not only_o and not only_e:
        return "Splitter outcome sets: same kinds of answer, different bytes"
    return f"Splitter outcome sets: oracle only {only_o or '-'} / engine only {only_e or '-'}"


def _single(o: Reply, e: Reply) -> str:
    """How one oracle answer and one engine answer differ: status, then type, cause, body."""
    if o.status != e.status:
        return f"status {o.status} vs {e.status}: oracle {_describe(o)} / engine {_describe(e)}"
    if o.content_type != e.content_type:
        return f"content-type {o.content_type!r} vs {e.content_type!r}"
    oc, ec = o.cause(), e.cause()
    if oc is not None or ec is not None:
        if oc is not None and ec is not None and _template(oc) == _template(ec):
            return f"cause text (same template): {_template(oc)!r}"
        return f"cause text: {_template(oc) if oc else None!r} vs {_template(ec) if ec else None!r}"
    ov, oval = _json_value(o.body)
    ev, eval_ = _json_value(e.body)
    if ov and ev:
        return (
            "body bytes: same JSON value, different encoding"
            if oval == eval_
            else "body bytes: different JSON value"
        )
    return f"body bytes: {'json' if ov else 'non-json'} vs {'json' if ev else 'non-json'}"


@dataclass(slots=True)
class DivergenceClass:
    """Every comparison of one signature; ``example`` is the (possibly shrunk) one to replay."""

    signature: str
    members: list[Comparison] = field(default_factory=list)
    example: Comparison | None = None
    folder: Path | None = None

    @property
    def count(self) -> int:
        return len(self.members)


def classify(comparisons: list[Comparison], suspects: frozenset[str] = frozenset()) -> list[DivergenceClass]:
    """Divergences (and wrong deviation answers) grouped by signature, largest class first."""
    classes: dict[str, DivergenceClass] = {}
    for comparison in comparisons:
        if comparison.outcome in ("divergence", "deviation-wrong"):
            sig = signature(comparison, suspects)
            classes.setdefault(sig, DivergenceClass(sig)).members.append(comparison)
    ordered = sorted(classes.values(), key=lambda c: (-c.count, c.signature))
    for cls in ordered:
        cls.example = min(cls.members, key=_size)
    return ordered


def _size(comparison: Comparison) -> tuple[int, int]:
    nodes = comparison.case.spec["nodes"]
    steps = sum(len(n.get("steps", [])) for n in nodes.values())
    return (steps + len(nodes), len(comparison.request.body))


# --- shrinking -----------------------------------------------------------------------------------


Probe = Callable[[Case], Comparison | None]


def _candidates(case: Case) -> list[Case]:
    """Smaller variants of a one-request case: fewer nodes, steps, step fields, headers."""
    out: list[Case] = []

    def variant(spec: dict[str, Any], request: Request | None = None, propagate: str | None = None) -> Case:
        return Case(
            case.case_id,
            case.kind,
            spec,
            case.services,
            case.propagate if propagate is None else propagate,
            (request or case.requests[0],),
            case.note,
        )

    nodes = case.spec["nodes"]
    for name in nodes:
        if name != "root":
            spec = json.loads(json.dumps(case.spec))
            del spec["nodes"][name]
            out.append(variant(spec))
    for name, node in nodes.items():
        for i in range(len(node.get("steps", []))):
            spec = json.loads(json.dumps(case.spec))
            del spec["nodes"][name]["steps"][i]
            out.append(variant(spec))
    for name, node in nodes.items():
        for i, step in enumerate(node.get("steps", [])):
            for key in ("name", "condition", "data", "dependency", "mapPredictionsToInstances"):
                if key in step:
                    spec = json.loads(json.dumps(case.spec))
                    del spec["nodes"][name]["steps"][i][key]
                    out.append(variant(spec))
            if "serviceName" in step:
                spec = json.loads(json.dumps(case.spec))
                target = spec["nodes"][name]["steps"][i]
                target["serviceUrl"] = case.services[target.pop("serviceName")]
                out.append(variant(spec))
    request = case.requests[0]
    for i in range(len(request.headers)):
        headers = request.headers[:i] + request.headers[i + 1 :]
        out.append(variant(case.spec, Request(request.body, headers, request.method)))
    if case.propagate:
        out.append(variant(case.spec, propagate=""))
    if request.method != "POST":
        out.append(variant(case.spec, Request(request.body, request.headers, "POST")))
    return out


def shrink(
    comparison: Comparison, probe: Probe, budget: int, suspects: frozenset[str] = frozenset()
) -> Comparison:
    """Greedily shrink the example while ``probe`` gives a comparison of the same signature.

    ``budget`` bounds the probes (each starts an oracle and an engine; a probe of a graph with a
    Splitter samples both sides as the run does).
    """
    target = signature(comparison, suspects)
    case = comparison.case
    best = comparison
    one = Case(
        case.case_id, case.kind, case.spec, case.services, case.propagate, (comparison.request,), case.note
    )
    progress = True
    while progress and budget > 0:
        progress = False
        for candidate in _candidates(one):
            if budget <= 0:
                break
            budget -= 1
            result = probe(candidate)
            if (
                result is not None
                and result.outcome == best.outcome
                and signature(result, suspects) == target
            ):
                one, best, progress = candidate, result, True
                break
    used = {s.get("serviceName") for n in one.spec["nodes"].values() for s in n.get("steps", [])}
    services = {k: v for k, v in one.services.items() if k in used}
    final = Case(one.case_id, one.kind, one.spec, services, one.propagate, one.requests, one.note)
    return Comparison(final, 0, best.outcome, best.oracle, best.engine, best.sent)


# --- output --------------------------------------------------------------------------------------


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60]


def write_artifacts(classes: list[DivergenceClass], folder: Path) -> None:
    """One folder per class: ``case.json`` (graph with placeholders + the request), the spec the
    oracle gets, both answers, and how to replay. Replaces what an earlier run wrote there."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("[0-9][0-9]-*"):
        shutil.rmtree(old)
    for i, cls in enumerate(classes, 1):
        example = cls.example
        assert example is not None
        target = folder / f"{i:02d}-{_slug(cls.signature)}"
        target.mkdir(exist_ok=True)
        case = example.case
        one = Case(
            case.case_id, case.kind, case.spec, case.services, case.propagate, (example.request,), case.note
        )
        (target / "case.json").write_text(json.dumps(one.to_json(), indent=2) + "\n")
        (target / "oracle-spec.json").write_text(json.dumps(oracle_spec(one), indent=2) + "\n")
        answers = {
            "class": cls.signature,
            "count": cls.count,
            "oracle": [r.to_json() for r in example.oracle],
            "engine": [r.to_json() for r in example.engine],
        }
        (target / "answers.json").write_text(json.dumps(answers, indent=2) + "\n")
        (target / "README.txt").write_text(
            f"{cls.signature}\n\n{render_example(example)}\n"
            f"Replay: .venv/bin/python -m tests.engine.differential --replay {target}\n"
        )
        cls.folder = target


def render_example(example: Comparison) -> str:
    """The example as text: graph (spec), request, and both answers."""
    req = example.request
    lines = [
        f"graph: {json.dumps(example.case.spec, separators=(',', ':'))}",
    ]
    if example.case.services:
        lines.append(f"services: {json.dumps(example.case.services, separators=(',', ':'))}")
    if example.case.propagate:
        lines.append(f"PROPAGATE_HEADERS: {example.case.propagate}")
    headers = "; ".join(f"{k}: {v}" for k, v in req.headers)
    lines.append(f"request: {req.method} {req.body!r}" + (f" headers {headers}" if headers else ""))
    lines += [f"oracle: {r.show()}" for r in example.oracle]
    lines += [f"engine: {r.show()}" for r in example.engine]
    return "\n".join(lines)


def table(classes: list[DivergenceClass], comparisons: list[Comparison], sent: int) -> str:
    """The divergence table with the run's figures, as printed by the script."""
    outcomes = {
        k: sum(1 for c in comparisons if c.outcome == k)
        for k in ("match", "divergence", "deviation", "deviation-wrong")
    }
    graphs = len({c.case.case_id for c in comparisons})
    random_n = sum(1 for c in comparisons if c.case.random)
    lines = [
        f"{len(comparisons)} requests on {graphs} graphs compared ({random_n} as Splitter outcome sets; "
        f"{sent} HTTP requests sent); matches {outcomes['match']}, divergences {outcomes['divergence']}, "
        f"documented deviations {outcomes['deviation']} (wrong engine answer: {outcomes['deviation-wrong']})",
    ]
    replayed = [c for c in comparisons if c.replays and c.outcome != "divergence"]
    if replayed:
        ids = ", ".join(sorted({f"{c.case.case_id}#{c.index}" for c in replayed}))
        lines.append(
            f"{len(replayed)} timed comparison(s) diverged, then agreed on a replay "
            f"(a stall can deliver an Ensemble's answers out of order): {ids}"
        )
    lines += [
        "",
        f"{'count':>5}  class",
    ]
    for cls in classes:
        lines.append(f"{cls.count:>5}  {cls.signature}")
        if cls.folder is not None:
            lines.append(f"       example: {cls.folder}")
    return "\n".join(lines)


def condition_table(divergences: list[ConditionDivergence]) -> str:
    """Conditions (and validity checks) where Go gjson and the engine disagree, one line per
    condition with how many documents disagree and the first of them."""
    if not divergences:
        return "GJSON conditions: the engine agrees with Go gjson on every (document, condition) pair"
    first: dict[str | None, ConditionDivergence] = {}
    counts: dict[str | None, int] = {}
    for d in divergences:
        first.setdefault(d.condition, d)
        counts[d.condition] = counts.get(d.condition, 0) + 1
    lines = [f"GJSON conditions where the engine disagrees with Go gjson ({len(divergences)} pairs):", ""]
    lines.append(f"{'docs':>5}  first example")
    for key in sorted(first, key=lambda k: (-counts[k], str(k))):
        lines.append(f"{counts[key]:>5}  {first[key].show()}")
    return "\n".join(lines)
