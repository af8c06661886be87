"""What the command promises beside answers: an exit status per outcome (0 answer, 1 findings
at or above --fail-on, 2 tool error, 3 usage error), help on every command and option,
JSON, YAML and text, its version, and shell completion."""

from __future__ import annotations

import argparse
import io
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from netsight.cli import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_TOOL_ERROR,
    EXIT_USAGE,
    build_parser,
    main,
)
from netsight.cli.printing import fails
from tests.conftest import ROOT

SHOP = str(ROOT / "examples" / "shop")
CLEAN = """\
apiVersion: v1
kind: Namespace
metadata: {name: quiet}
"""


def run(*argv: str, stdin: str = "") -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), stdin=io.StringIO(stdin), stdout=out)
    return code, out.getvalue()


def parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from parsers(sub)


def test_every_command_and_option_has_help() -> None:
    missing = []
    for parser in parsers(build_parser()):
        for action in parser._actions:
            if not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{parser.prog}: {'/'.join(action.option_strings) or action.dest}")
            if isinstance(action, argparse._SubParsersAction):
                helped = {choice.dest for choice in action._choices_actions if choice.help}
                missing.extend(f"{parser.prog} {name}" for name in action.choices
                               if name not in helped)
        assert parser.description or parser.prog == "netsight", parser.prog
    assert missing == []


@pytest.mark.parametrize(("argv", "status"), [
    (["call", "analyze_config", "-f", SHOP], EXIT_OK),
    (["call", "analyze_config", "-f", SHOP, "--fail-on", "critical"], EXIT_FINDINGS),
    (["call", "analyze_config", "-f", SHOP, "--fail-on", "warning", "--min-severity",
      "warning"], EXIT_FINDINGS),
    (["call", "analyze_config", "-f", "-", "--fail-on", "warning"], EXIT_OK),
    (["call", "diagnose_service", "-f", SHOP, "--service", "shop/frontend",
      "--fail-on", "critical"], EXIT_OK),
    (["call", "diagnose_service", "-f", SHOP, "--service", "shop/cart",
      "--fail-on", "critical"], EXIT_FINDINGS),
    (["call", "diagnose_service", "-f", SHOP, "--service", "shop/nope",
      "--fail-on", "critical"], EXIT_TOOL_ERROR),
])
def test_exit_status_says_the_outcome(argv: list[str], status: int) -> None:
    code, text = run(*argv, stdin=CLEAN)
    assert code == status, text


@pytest.mark.parametrize("argv", [
    [], ["call"], ["call", "no_such_tool"], ["call", "analyze_config", "--limit", "ten"],
    ["call", "analyze_config", "--fail-on", "info"], ["call", "analyze_config", "--bogus"],
    ["call", "analyze_config", "-f", SHOP, "--server", "http://127.0.0.1:9"],
    ["call", "analyze_config", "-f", SHOP, "--context", "prod"], ["completion", "fish!"],
])
def test_usage_errors_exit_3_with_usage_on_stderr(argv: list[str],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith("usage: netsight")
    assert "error:" in err


def test_an_unknown_tool_lists_the_tools(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["call", "diagnose_servce"])
    assert "'diagnose_service'" in capsys.readouterr().err


def test_fail_on_reads_findings_wherever_they_sit() -> None:
    nested = {"services": [{"findings": [{"code": "NS0102", "severity": "warning"}]}]}
    assert fails(nested, "warning")
    assert not fails(nested, "critical")
    assert not fails({"findings": [{"code": "NS0630", "severity": "info"}]}, "warning")
    assert not fails({"severity": "critical"}, "critical")  # not a finding: no code


def test_yaml_and_text_say_what_json_says() -> None:
    _, as_json = run("call", "diagnose_service", "-f", SHOP, "--service", "shop/cart")
    _, as_yaml = run("call", "diagnose_service", "-f", SHOP, "--service", "shop/cart",
                     "-o", "yaml")
    _, as_text = run("call", "diagnose_service", "-f", SHOP, "--service", "shop/cart",
                     "-o", "text")
    data, loaded = json.loads(as_json), yaml.safe_load(as_yaml)
    for value in (data, loaded):
        value["metadata"].pop("timestamp")
    assert loaded == data
    assert "[CRITICAL] NS0101 Service/shop/cart" in as_text

    code, error = run("call", "diagnose_service", "-f", SHOP, "--service", "x", "-o", "yaml")
    assert code == EXIT_TOOL_ERROR
    assert yaml.safe_load(error)["code"] == "INVALID_INPUT"


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == EXIT_OK
    name, version = capsys.readouterr().out.split()
    assert name == "netsight"
    assert version[0].isdigit()


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_completion_scripts_name_tools_and_their_flags(shell: str) -> None:
    code, script = run("completion", shell)
    assert code == EXIT_OK
    for word in ("find_blocking_policies", "--destination", "--fail-on", "--kubeconfig",
                 "completion"):
        assert word in script, word


def test_bash_completes_tools_and_flags(tmp_path: Path) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    _, script = run("completion", "bash")
    (tmp_path / "netsight.bash").write_text(script)
    probe = (f"source {tmp_path / 'netsight.bash'}\n"
             "complete_line() { COMP_WORDS=($1); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ));\n"
             "  [[ \"$1\" == *' ' ]] && COMP_CWORD=${#COMP_WORDS[@]};\n"
             "  COMP_LINE=\"$1\"; COMP_POINT=${#1}; COMPREPLY=();\n"
             "  _shtab_netsight; echo \"${COMPREPLY[*]}\"; }\n"
             "complete_line 'netsight call find_bl'\n"
             "complete_line 'netsight call find_blocking_policies --dest'\n")
    done = subprocess.run([bash, "-c", probe], capture_output=True, text=True, check=False)
    first, second = done.stdout.splitlines()[:2]
    assert "find_blocking_policies" in first, done.stderr
    assert "--destination" in second, done.stderr


def test_the_console_script_exits_with_the_documented_codes() -> None:
    exe = shutil.which("netsight", path=str(Path(sys.executable).parent))
    assert exe, "the netsight console script is not installed in this environment"
    statuses: dict[str, Any] = {}
    for name, argv in {"findings": ["call", "analyze_config", "-f", SHOP, "--fail-on",
                                    "critical"],
                       "usage": ["call", "analyze_config", "--no-such-flag"]}.items():
        done = subprocess.run([exe, *argv], capture_output=True, text=True, check=False)
        statuses[name] = done.returncode
    assert statuses == {"findings": EXIT_FINDINGS, "usage": EXIT_USAGE}
