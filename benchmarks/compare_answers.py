"""Prove that two source trees answer alike: every case through ``netsight call``, byte for byte.

    .venv/bin/python benchmarks/compare_answers.py TREE_A TREE_B         # dump both, compare
    .venv/bin/python benchmarks/compare_answers.py dump TREE OUT.json    # one tree's answers
    .venv/bin/python benchmarks/compare_answers.py compare A.json B.json

Only the command line is used (``netsight.cli.main(argv, stdout=...)``, in one child
process per tree with ``PYTHONPATH=TREE`` and cwd TREE), so a tree whose modules have moved
compares with one whose have not. The cases, read from TREE (manifest paths relative to it):

- ``tools``: the ``netsight tools`` listing (names, descriptions, input schemas);
- ``testdata:TOOL/CASE``: every ``tests/analyzers/testdata/TOOL/CASE/`` whose query.json the
  CLI can express (manifests source, no ``namespaces``, no ``synced``): ``call TOOL
  --manifests cluster.yaml --args ARGS --detail``, with ``"limit": 500`` added where the tool
  takes a limit, as ``tests/analyzers/test_testdata.py`` does. The others (cluster source,
  scoped) are listed under ``_skipped``;
- ``own:KIND/CASE:TOOL`` and ``shared:KIND/CASE:TOOL``: each case of ``tests/corpus/KIND/``
  and ``../shared/conformance/KIND/`` (KIND: netpol, anp, gateway, istio) through every tool
  without a required argument, with ``--detail``; netpol and anp cases also through
  ``reachability_matrix`` with the ports and protocols of their expected queries, as
  ``tests/analyzers/test_policy_conformance.py`` builds them. A tree with no
  ``../shared/conformance`` beside it dumps without the shared cases, and says so.

At 8b62dad that is 2,970 cases (84 testdata cases skipped); a dump takes about 11 s, and
the two of a comparison run side by side. Each answer is kept as ``exit N`` and the printed
JSON; a call that raises (or runs past 120 s) is kept as exit 1 and its stderr's tail, with
the exception's type and message but not its traceback, whose paths move with the modules.

Masked (the value replaced by ``"<masked>"``), the times that differ run to run: the
answer's ``metadata.timestamp``, and recent_changes' ``changes[].at`` and ``oldestHeld`` (when
each manifest object was loaded); a value is masked only where it is an ISO-8601 time under
one of those keys. Nothing else differed between two dumps of the same tree.

``compare`` prints the number of cases compared and, for each that differs, the first 40
lines of a unified diff; its exit status is 1 if any answer differs or the case ids do, else 0.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

KINDS = ("netpol", "anp", "gateway", "istio")
CASE_TIMEOUT_S = 120
# The times that differ run to run (the docstring says where), when they hold a time.
TIMES = re.compile(r'("(?:timestamp|at|oldestHeld)": )"\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-][\d:]+)"')


def mask(text: str) -> str:
    return TIMES.sub(r'\1"<masked>"', text)


def cases(tools: list[dict[str, Any]]) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Every case's ``netsight`` argv by id (paths relative to the tree), and why some are not
    run, by id."""
    limited = {t["name"] for t in tools if "limit" in t["inputSchema"].get("properties", {})}
    free = [t["name"] for t in tools if not t["inputSchema"].get("required")]
    argvs: dict[str, list[str]] = {}
    skipped: dict[str, str] = {}
    for query_file in sorted(Path("tests/analyzers/testdata").glob("*/*/query.json")):
        case = query_file.parent
        case_id = f"testdata:{case.parent.name}/{case.name}"
        query = json.loads(query_file.read_text())
        if query.get("source", "manifests") != "manifests":
            skipped[case_id] = "cluster source"
            continue
        if "namespaces" in query or "synced" in query:
            skipped[case_id] = "scoped" if "namespaces" in query else "synced kinds"
            continue
        args = dict(query.get("args", {}))
        if query["tool"] in limited:
            args.setdefault("limit", 500)
        argvs[case_id] = ["call", query["tool"], "--manifests", str(case / "cluster.yaml"),
                          "--args", json.dumps(args), "--detail"]
    corpora = {"own": Path("tests/corpus"), "shared": Path("../shared/conformance")}
    for origin, root in corpora.items():
        if not root.is_dir():
            print(f"{Path.cwd()}: no {root}, its cases left out", file=sys.stderr)
        for manifests in sorted(p for kind in KINDS for p in root.glob(f"{kind}/*/manifests.yaml")):
            case = manifests.parent
            prefix = f"{origin}:{case.parent.name}/{case.name}"
            for tool in free:
                argvs[f"{prefix}:{tool}"] = ["call", tool, "--manifests", str(manifests),
                                             "--detail"]
            if case.parent.name in ("netpol", "anp"):
                queries = json.loads((case / "expected.json").read_text())["queries"]
                args = {"ports": sorted({q["port"] for q in queries}),
                        "protocols": sorted({q["protocol"] for q in queries})}
                argvs[f"{prefix}:reachability_matrix"] = [
                    "call", "reachability_matrix", "--manifests", str(manifests),
                    "--args", json.dumps(args), "--detail"]
    return argvs, skipped


def run(main: Callable[..., int], argv: list[str]) -> str:
    """One CLI call as ``exit N`` and its output; a crash as its status and stderr's tail."""
    out, err = io.StringIO(), io.StringIO()
    signal.alarm(CASE_TIMEOUT_S)
    try:
        with contextlib.redirect_stderr(err):
            code = main(argv, stdout=out)
    except SystemExit as exc:  # argparse
        code = exc.code if isinstance(exc.code, int) else 1
    except Exception as exc:  # a bug, or the alarm: kept, and the next case runs
        code = 1
        err.write(f"{type(exc).__name__}: {exc}\n")
    finally:
        signal.alarm(0)
    text = f"exit {code}\n{mask(out.getvalue())}"
    if code not in (0, 2):
        text += "--- stderr (tail) ---\n" + "\n".join(err.getvalue().splitlines()[-5:]) + "\n"
    return text


def child(out_path: Path) -> None:
    """In the tree (cwd, PYTHONPATH): every case through ``netsight.cli.main``."""
    import netsight
    from netsight.cli import main

    where = Path(next(iter(netsight.__path__))).resolve()
    assert where.is_relative_to(Path.cwd().resolve()), f"netsight imported from {where}"

    def timeout(signum: int, frame: object) -> None:
        raise TimeoutError(f"no answer in {CASE_TIMEOUT_S} s")

    signal.signal(signal.SIGALRM, timeout)
    listing = io.StringIO()
    main(["tools"], stdout=listing)
    argvs, skipped = cases(json.loads(listing.getvalue()))
    answers: dict[str, Any] = {"tools": f"exit 0\n{listing.getvalue()}"}
    answers.update((case_id, run(main, argv)) for case_id, argv in argvs.items())
    answers["_skipped"] = {"count": len(skipped), "cases": skipped}
    out_path.write_text(json.dumps(answers, indent=1) + "\n")


def dump(tree: Path, out: Path) -> subprocess.Popen[bytes]:
    """Start the child that dumps ``tree``'s answers to ``out``."""
    env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
    env.pop("CLUSTER_NAME", None)  # the default name, "local", in every dump
    return subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--child",
                             str(out.resolve())], cwd=tree, env=env)


def dump_all(pairs: list[tuple[Path, Path]]) -> None:
    for tree, _ in pairs:
        if not any((tree / "netsight" / cli).is_file() for cli in ("cli.py", "cli/main.py")):
            sys.exit(f"{tree}: not a netsight source tree (no netsight/cli)")
    started = time.perf_counter()
    procs = [dump(tree, out) for tree, out in pairs]
    for code, (tree, _) in zip([proc.wait() for proc in procs], pairs, strict=True):
        if code != 0:
            sys.exit(f"dump of {tree} failed (exit {code})")
    for tree, out in pairs:
        answers = json.loads(out.read_text())
        print(f"{tree}: {len(answers) - 1} cases ({answers['_skipped']['count']} skipped) "
              f"-> {out}, {time.perf_counter() - started:.0f} s")


def compare(a_path: Path, b_path: Path) -> int:
    a, b = json.loads(a_path.read_text()), json.loads(b_path.read_text())
    common = [case_id for case_id in a if case_id in b]
    differing = [case_id for case_id in common if a[case_id] != b[case_id]]
    count = sum(1 for case_id in common if not case_id.startswith("_"))
    print(f"{count} cases compared, {len(differing)} differ")
    for case_id in differing:
        old, new = (v if isinstance(v, str) else json.dumps(v, indent=1)
                    for v in (a[case_id], b[case_id]))
        diff = list(difflib.unified_diff(old.splitlines(), new.splitlines(), str(a_path),
                                         str(b_path), n=2, lineterm=""))
        was, now = old.split("\n", 1)[0], new.split("\n", 1)[0]  # exit N
        print(f"\n== {case_id}" + (f" ({was} -> {now})" if was != now else ""))
        print("\n".join(diff[:40]) + ("\n..." if len(diff) > 40 else ""))
    for path, only in ((a_path, a.keys() - b.keys()), (b_path, b.keys() - a.keys())):
        if only:
            print(f"\nonly in {path} ({len(only)}): " + ", ".join(sorted(only)[:20])
                  + (", ..." if len(only) > 20 else ""))
    return 1 if differing or a.keys() != b.keys() else 0


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(Path(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None,
                                     usage="%(prog)s (dump TREE OUT | compare A B | TREE_A TREE_B)")
    parser.add_argument("words", nargs=3 if sys.argv[1:2] in (["dump"], ["compare"]) else 2)
    words = parser.parse_args().words
    if words[0] == "dump":
        dump_all([(Path(words[1]), Path(words[2]))])
    elif words[0] == "compare":
        sys.exit(compare(Path(words[1]), Path(words[2])))
    else:
        with tempfile.TemporaryDirectory(prefix="answers-") as tmp:
            outs = [Path(tmp) / "a.json", Path(tmp) / "b.json"]
            dump_all([(Path(words[0]), outs[0]), (Path(words[1]), outs[1])])
            sys.exit(compare(*outs))


if __name__ == "__main__":
    main()
