"""``python -m benchmarks`` (or ``netsight bench`` in a source checkout): the suite.

    python -m benchmarks --scale S            # 1k pods, ~1 min
    python -m benchmarks --scale L            # 100k pods, ~10 min
    python -m benchmarks --scale 200 --quick  # what CI runs
    python -m benchmarks report               # the README's table and the plots, again

Each run writes ``<out>/<scale>.json``, then regenerates the table in
``benchmarks/README.md`` and the plots from every JSON file in ``<out>``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.cluster import Scale
from benchmarks.progress import progress
from benchmarks.report import README, regenerate
from benchmarks.suite import PHASES, Options, run

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", nargs="?", choices=("run", "report"), default="run",
                        help="run (default) a scale, or regenerate the report only")
    parser.add_argument("--scale", default="S",
                        help="S (1k pods), M (10k), L (100k), XL (150k), or a pod count "
                             "(L's proportions): 200, 25k")
    parser.add_argument("--out", type=Path, default=RESULTS,
                        help="where <scale>.json and the plots go (default benchmarks/results)")
    parser.add_argument("--only", default=",".join(PHASES),
                        help=f"comma-separated phases beside time to ready and RSS "
                             f"(default all: {','.join(PHASES)})")
    parser.add_argument("--seed", type=int, default=1, help="the cluster's seed (default 1)")
    parser.add_argument("--quick", action="store_true",
                        help="few repeats and a short churn: checks the suite, not figures")
    parser.add_argument("--readme", type=Path, default=README,
                        help="the README whose table is regenerated (default "
                             "benchmarks/README.md)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "report":
        for line in regenerate(args.out, args.readme):
            print(line, file=sys.stderr)
        return 0
    only = frozenset(p.strip() for p in args.only.split(",") if p.strip())
    if unknown := only - set(PHASES):
        parser.error(f"--only: unknown phase(s) {', '.join(sorted(unknown))}; "
                     f"choose from {', '.join(PHASES)}")
    try:
        scale = Scale.parse(args.scale)
    except ValueError as exc:
        parser.error(f"--scale: {exc}")
    options = Options(scale=scale, seed=args.seed, only=only, quick=args.quick)
    try:
        import uvloop
        loop_factory = uvloop.new_event_loop
    except ImportError:  # as netsight serve: asyncio's loop where uvloop is missing
        loop_factory = None
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        result = runner.run(run(options, progress, HERE / ".work"))
    args.out.mkdir(parents=True, exist_ok=True)
    target = args.out / f"{scale.name}.json"
    target.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {target} in {result['wall_s']} s", file=sys.stderr)
    for line in regenerate(args.out, args.readme):
        print(line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
