"""Meta-tests: the declared checks and tools, their registration and the code table stay
coherent."""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections import defaultdict
from typing import TypeVar

import netsight.analyzers
import netsight.analyzers.tools
from netsight.analyzers.checks import CHECKS
from netsight.analyzers.core import codes
from netsight.analyzers.core.declarations import AnalyzerMetadata, Check, Tool, Toolset
from netsight.analyzers.tools import TOOLS
from netsight.server.probe_tools import probe_tools
from tests.analyzers.test_testdata import CASES, load_case, run_case

D = TypeVar("D")


def _declarations(kind: type[D]) -> dict[str, list[D]]:
    """Every value of type ``kind`` at the top level of a module under netsight.analyzers,
    by module."""
    found: dict[str, list[D]] = defaultdict(list)
    for info in pkgutil.walk_packages(netsight.analyzers.__path__, "netsight.analyzers."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, kind):
                found[module.__name__].append(value)
    return found


def test_every_check_is_registered_once() -> None:
    declared = _declarations(Check)
    assert all(module.startswith("netsight.analyzers.checks.") for module in declared), \
        sorted(declared)
    assert all(len(found) == 1 for found in declared.values()), declared
    assert len(set(map(id, CHECKS))) == len(CHECKS)
    assert {id(c) for found in declared.values() for c in found} == set(map(id, CHECKS))


def test_every_tool_module_declares_one_tool_the_catalog_lists() -> None:
    declared = _declarations(Tool)
    modules = {info.name for info in pkgutil.iter_modules(
        netsight.analyzers.tools.__path__, "netsight.analyzers.tools.")}
    assert set(declared) == modules
    assert all(len(found) == 1 for found in declared.values()), declared
    assert len(TOOLS) == len(modules)
    assert all(TOOLS[tool.name] is tool for (tool,) in declared.values())


def test_every_analyzer_metadata_is_declared_with_its_module() -> None:
    """An analyzer's metadata is its module's Check's or Tool's: none is left unregistered."""
    used = {id(d.metadata) for kind in (Check, Tool) for found in _declarations(kind).values()
            for d in found}
    for module, metadata in _declarations(AnalyzerMetadata).items():
        assert {id(m) for m in metadata} <= used, module


def test_analyzer_and_tool_names_are_unique() -> None:
    names = [check.metadata.name for check in CHECKS]
    assert len(names) == len(set(names))
    assert not set(names) & set(TOOLS)


def test_codes_are_unique_well_formed_and_owned_by_one_analyzer() -> None:
    assert len({c.name for c in codes.CODES.values()}) == len(codes.CODES)
    owners: dict[str, list[str]] = defaultdict(list)
    for check in CHECKS:
        meta = check.metadata
        for code in meta.codes:
            owners[code.code].append(meta.name)
    assert set(owners) == set(codes.CODES), "a code no analyzer reports, or vice versa"
    assert all(len(o) == 1 for o in owners.values()), owners
    for code in codes.CODES.values():
        assert code.code.startswith("NS"), code
        assert len(code.code) == 6, code
        assert code.code[2:].isdigit(), code
        assert all(e[:3] in ("IST", "KIA") for e in code.equivalent)


def test_every_code_has_a_testdata_case() -> None:
    covered = set()
    for case in CASES:
        _, expected, _ = load_case(case)
        covered.update(expected.get("codes", []))
    missing = sorted(set(codes.CODES) - covered)
    assert not missing, f"codes without a testdata case: {missing}"


def test_declared_inputs_equal_what_analyzers_read() -> None:
    """Across the corpus, each analyzer reads only what it declares, and all of it."""
    by_analyzer: dict[str, set[str]] = defaultdict(set)
    for case in CASES:
        query, _, _ = load_case(case)
        if query["tool"] != "analyze_config" or "analyzers" not in query.get("args", {}):
            continue
        (name,) = query["args"]["analyzers"]
        _, view = run_case(case)
        by_analyzer[name] |= view.read
    for check in CHECKS:
        meta = check.metadata
        read = by_analyzer.get(meta.name, set())
        assert read <= meta.reads, f"{meta.name} read undeclared kinds {read - meta.reads}"
        assert read == meta.reads, f"{meta.name} never read {meta.reads - read} in testdata"


def test_tool_schemas_are_json() -> None:
    for tool in TOOLS.values():
        json.dumps(tool.input_schema())
        json.dumps(tool.output_schema())
        assert "detail" in tool.input_schema()["properties"]


def test_every_toolset_groups_tools_and_every_tool_declares_one() -> None:
    # The probe tools are the server's (they do I/O), offered only with --probes.
    probes = probe_tools(None)  # declarations only
    assert {tool.toolset for tool in TOOLS.values()} == set(Toolset) - {Toolset.PROBES}
    assert {tool.toolset for tool in probes.values()} == {Toolset.PROBES}
    assert all(isinstance(tool.toolset, Toolset) for tool in TOOLS.values())
