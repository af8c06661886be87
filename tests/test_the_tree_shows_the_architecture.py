"""Meta-tests: the tree keeps the shape the layout issue gave it.

Module basenames are unique across packages (a newcomer finds a module by its name), no module
outgrows one idea (~600 lines; the finding-code table and the synthetic generator are data),
and no private name crosses a module boundary: what another module needs is public, or lives
there. The layer contracts themselves are import-linter's (pyproject.toml), run in CI.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import netsight

PACKAGE = Path(netsight.__file__).parent
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
MAX_LINES = 600
DATA_TABLES = {"analyzers/core/codes.py", "sim/synthetic.py"}


def _name(path: Path) -> str:
    return ".".join(("netsight", *path.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(
        ".__init__")


def test_no_two_modules_share_a_name() -> None:
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in MODULES:
        if path.name != "__init__.py":
            by_name[path.stem].append(_name(path))
    assert {n: m for n, m in by_name.items() if len(m) > 1} == {}


def test_no_module_outgrows_one_idea() -> None:
    long = {str(p.relative_to(PACKAGE)): n for p in MODULES
            if (n := len(p.read_text().splitlines())) > MAX_LINES
            and str(p.relative_to(PACKAGE)) not in DATA_TABLES}
    assert long == {}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _crossings(path: Path) -> list[str]:
    """Private names this module imports from, or reads on, another netsight module."""
    tree = ast.parse(path.read_text())
    here = _name(path)
    modules: set[str] = set()  # local names bound to netsight modules
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.startswith("netsight") and node.module != here:
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"from {node.module} import {alias.name}")
                elif (PACKAGE.parent / node.module.replace(".", "/") / f"{alias.name}.py"
                      ).exists():
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("netsight") and alias.asname:
                    modules.add(alias.asname)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) \
                and isinstance(node.value, ast.Name) and node.value.id in modules:
            found.append(f"{node.value.id}.{node.attr}")
    return found


def test_no_private_name_crosses_a_module_boundary() -> None:
    crossings = {str(p.relative_to(PACKAGE)): c for p in MODULES if (c := _crossings(p))}
    assert crossings == {}


def test_every_top_level_package_has_its_place_in_the_layers() -> None:
    """A new package (knowledge/, say) is placed in the one contract that orders them all,
    or import-linter would never check what it may import."""
    import tomllib

    pyproject = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())
    contracts = pyproject["tool"]["importlinter"]["contracts"]
    layered = {name.strip() for layer in contracts[0]["layers"] for name in layer.split("|")}
    packages = {f"netsight.{p.name}" for p in PACKAGE.iterdir()
                if (p / "__init__.py").exists()}
    assert packages == layered
