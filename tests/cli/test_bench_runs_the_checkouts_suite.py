"""``netsight bench``: the suite of the source checkout, or a clear refusal where netsight
is installed without one (a wheel ships no benchmarks/)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import netsight

PACKAGE = Path(netsight.__file__).resolve().parent


def netsight_cli(args: list[str], tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "netsight.cli", *args], cwd=tree,
                          capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, "PYTHONPATH": str(tree)})


def test_in_a_checkout_it_is_the_suite() -> None:
    done = netsight_cli(["bench", "--help"], PACKAGE.parent)
    assert done.returncode == 0, done.stderr
    assert "--scale" in done.stdout
    assert "python -m benchmarks" in done.stdout


def test_without_the_benchmarks_directory_it_says_so_and_exits_2(tmp_path: Path) -> None:
    shutil.copytree(PACKAGE, tmp_path / "netsight",
                    ignore=shutil.ignore_patterns("__pycache__"))
    done = netsight_cli(["bench", "--scale", "S"], tmp_path)
    assert done.returncode == 2
    assert "source tree" in done.stderr
    assert "benchmarks/" in done.stderr
