"""requirements/*.lock pin, hash-checked, every dependency pyproject.toml asks for.

The Dockerfile installs runtime.lock and .ci/run installs dev.lock, both with
``--require-hashes``, so a dependency added to pyproject.toml without running
``bash .ci/lock.sh`` would be missing from the image and from CI: these tests fail until the
locks are compiled again. Each lock is universal (markers, not one file per Python), so it is
read here as each supported interpreter and platform would read it.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from typing import Any

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from tests.conftest import ROOT

LOCKS = ROOT / "requirements"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# The interpreters the suite runs on (README); the classifiers must say the same.
PYTHONS = ("3.11", "3.12", "3.13")
MACHINES = ("x86_64", "aarch64")
Environment = dict[str, str]


def environment(python: str, machine: str) -> Environment:
    """PEP 508 marker values of CPython ``python`` on Linux ``machine``."""
    return {"python_version": python, "python_full_version": f"{python}.0",
            "implementation_name": "cpython", "platform_python_implementation": "CPython",
            "sys_platform": "linux", "platform_system": "Linux", "os_name": "posix",
            "platform_machine": machine, "extra": ""}


PLATFORMS = [environment(python, machine) for python in PYTHONS for machine in MACHINES]
ENVIRONMENTS = [pytest.param(env, id=f"py{env['python_version']}-{env['platform_machine']}")
                for env in PLATFORMS]


@dataclass(frozen=True)
class Pin:
    name: str
    version: str
    marker: Marker | None
    hashes: tuple[str, ...]

    def applies(self, env: Environment) -> bool:
        return self.marker is None or self.marker.evaluate(env)


def read_lock(text: str) -> list[Pin]:
    """The pins of a pip requirements file as ``uv pip compile --generate-hashes`` writes it."""
    pins = []
    for line in re.sub(r"\\\n", " ", text).splitlines():
        line = line.partition("#")[0].strip()
        if not line:
            continue
        spec, *hashes = re.split(r"\s+--hash=", line)
        requirement = Requirement(spec)
        (specifier,) = requirement.specifier
        assert specifier.operator == "==", f"not a pin: {line}"
        pins.append(Pin(canonicalize_name(requirement.name), specifier.version,
                        requirement.marker, tuple(hashes)))
    return pins


def lock(name: str) -> list[Pin]:
    return read_lock((LOCKS / name).read_text())


def unpinned(requirements: list[str], pins: list[Pin], env: Environment) -> list[str]:
    """The requirements that ``env`` needs and ``pins`` do not satisfy there, saying why."""
    installed = {}
    for pin in pins:
        if pin.applies(env):
            assert pin.name not in installed, f"{pin.name} pinned twice for {env}"
            installed[pin.name] = pin.version
    problems = []
    for text in requirements:
        requirement = Requirement(text)
        if requirement.marker is not None and not requirement.marker.evaluate(env):
            continue
        version = installed.get(canonicalize_name(requirement.name))
        if version is None:
            problems.append(f"{text}: not in the lock")
        elif not requirement.specifier.contains(version, prereleases=True):
            problems.append(f"{text}: the lock pins {version}")
    return problems


def project(key: str) -> Any:
    return PYPROJECT["project"][key]


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_runtime_lock_pins_every_dependency(env: Environment) -> None:
    # The image can keep its knowledge base on PostgreSQL: the postgres extra is in it.
    wanted = project("dependencies") + project("optional-dependencies")["postgres"]
    assert unpinned(wanted, lock("runtime.lock"), env) == []


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_dev_lock_pins_the_dependencies_and_the_dev_extra(env: Environment) -> None:
    wanted = project("dependencies") + project("optional-dependencies")["dev"]
    assert unpinned(wanted, lock("dev.lock"), env) == []


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_dev_lock_tests_the_versions_the_image_runs(env: Environment) -> None:
    runtime = {(p.name, p.version) for p in lock("runtime.lock") if p.applies(env)}
    dev = {(p.name, p.version) for p in lock("dev.lock") if p.applies(env)}
    assert runtime - dev == set()


def test_build_lock_pins_the_build_requirements() -> None:
    requires = PYPROJECT["build-system"]["requires"]
    for env in PLATFORMS:
        assert unpinned(requires, lock("build.lock"), env) == []


def test_setuptools_reads_the_license_expression() -> None:
    # PEP 639's `license = "<SPDX expression>"` is read from setuptools 77 on; 69 rejects it.
    assert isinstance(project("license"), str)
    (setuptools,) = [Requirement(r) for r in PYPROJECT["build-system"]["requires"]
                     if Requirement(r).name == "setuptools"]
    assert not setuptools.specifier.contains("76.9")
    assert setuptools.specifier.contains("77.0")


@pytest.mark.parametrize("name", ["runtime.lock", "dev.lock", "build.lock"])
def test_every_pin_carries_hashes(name: str) -> None:
    pins = lock(name)
    assert pins
    for pin in pins:
        assert pin.hashes, f"{name}: {pin.name} has no hash; pip --require-hashes refuses it"
        assert all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for h in pin.hashes), pin


def test_a_dependency_the_lock_lacks_is_reported() -> None:
    env = environment(PYTHONS[0], MACHINES[0])
    pins = lock("runtime.lock")
    wanted = [*project("dependencies"), "left-pad>=1", "networkx>=999"]
    assert unpinned(wanted, pins, env) == [
        "left-pad>=1: not in the lock", f"networkx>=999: the lock pins {networkx(pins, env)}"]


def networkx(pins: list[Pin], env: Environment) -> str:
    return next(p.version for p in pins if p.name == "networkx" and p.applies(env))


def test_classifiers_and_requires_python_name_the_tested_interpreters() -> None:
    classified = tuple(c.rpartition(" :: ")[2] for c in project("classifiers")
                       if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c))
    assert classified == PYTHONS
    supported = SpecifierSet(project("requires-python"))
    assert all(supported.contains(f"{python}.0") for python in PYTHONS)
    assert not supported.contains("3.10.0")
    # The oldest one is what the lock is compiled for and what ruff and mypy check against.
    assert f"--python-version {PYTHONS[0]}" in (ROOT / ".ci" / "lock.sh").read_text()
    assert PYPROJECT["tool"]["mypy"]["python_version"] == PYTHONS[0]
    assert PYPROJECT["tool"]["ruff"]["target-version"] == "py" + PYTHONS[0].replace(".", "")


def test_ci_run_installs_every_package_from_the_locks_hash_checked() -> None:
    installs = [line.split() for line in (ROOT / ".ci" / "run").read_text().splitlines()
                if re.search(r"\bpip install\b", line) and not line.startswith("#")]
    locks = {words[words.index("-r") + 1] for words in installs if "-r" in words}
    assert locks == {"requirements/build.lock", "requirements/dev.lock"}
    for words in installs:
        if "-r" in words:
            assert "--require-hashes" in words, " ".join(words)
        else:
            # netsight itself: its dependencies and its build backend came from the locks.
            assert {"--no-deps", "--no-build-isolation", "-e", "."} <= set(words), words
