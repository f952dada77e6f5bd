"""``python -m tests.engine.differential [--release NAME|all] [--seed N] [--requests N] [--replay DIR]``.

Runs the differential comparison against the build of one KServe release (default master, the
newest; ``all``: every release in turn) and prints the divergence table (exit status 1 if any
request diverges), or replays one example folder written by an earlier run and prints both answers.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from graphs.language.releases import DEFAULT_RELEASE, RELEASES, Release, UnknownRelease, get_release
from tests.engine.differential.generator import Case
from tests.engine.differential.harness import Environment, compare_case, oracle_binary
from tests.engine.differential.report import render_example, signature
from tests.engine.differential.run import ARTIFACTS, DEFAULT_SEED, requests_from_env, run
from tests.engine.differential.stepserver import RefusedPort, StepServer


def _replay(folder: Path, release: Release) -> int:
    case = Case.from_json(json.loads((folder / "case.json").read_text()))
    with StepServer() as steps, RefusedPort() as refused:
        env = Environment(oracle_binary(release), steps.host, refused.host, DEFAULT_SEED, release)
        comparison = compare_case(case, env)[0]
    print(render_example(comparison))
    print(f"outcome: {comparison.outcome}")
    if comparison.outcome not in ("match", "deviation"):
        print(f"class: {signature(comparison)}")
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.engine.differential", description=__doc__)
    parser.add_argument("--release", default=DEFAULT_RELEASE.name, help="a KServe release, or all")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--requests", type=int, default=None, help="default: $DIFF_REQUESTS or 2000")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--shrink-budget", type=int, default=60, help="probes to shrink each class's example")
    parser.add_argument("--no-deviations", action="store_true", help="skip the deviation set")
    parser.add_argument("--replay", type=Path, help="replay one example folder and exit")
    args = parser.parse_args(argv)
    try:
        releases = list(RELEASES[::-1]) if args.release == "all" else [get_release(args.release)]
    except UnknownRelease as exc:
        parser.error(str(exc))
    if args.replay:
        return _replay(args.replay, releases[0])
    requests = args.requests if args.requests is not None else requests_from_env()
    failed = False
    for release in releases:
        binary = oracle_binary(release)
        if not binary.exists():
            print(f"KServe {release.name}: skipped, no build at {binary}", file=sys.stderr)
            failed |= release == DEFAULT_RELEASE
            continue
        result = run(
            args.seed,
            requests,
            workers=args.workers,
            deviations=not args.no_deviations,
            shrink_budget=args.shrink_budget,
            artifacts=ARTIFACTS if release == DEFAULT_RELEASE else ARTIFACTS / release.name,
            release=release,
        )
        print(f"=== KServe {release.label}")
        print(result.report, flush=True)
        failed |= bool(result.classes)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
