"""Each tool's arguments are flags made from its input schema at run time: the same answer as
``--args``, flags winning over it, values typed as the schema types them."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from netsight.analyzers.tools import TOOLS
from netsight.cli import EXIT_OK, EXIT_USAGE, main
from netsight.cli.command_line import Parser
from netsight.cli.tool_flags import add_tool_flags, tool_arguments
from tests.conftest import ROOT

SHOP = str(ROOT / "examples" / "shop")


def run(*argv: str) -> tuple[int, Any]:
    out = io.StringIO()
    code = main(list(argv), stdout=out)
    return code, json.loads(out.getvalue())


def without_timestamp(data: dict[str, Any]) -> dict[str, Any]:
    data["metadata"].pop("timestamp")
    return data


@pytest.mark.parametrize(("tool", "flags", "args"), [
    ("diagnose_service", ["--service", "shop/checkout", "--detail"],
     {"service": "shop/checkout", "detail": True}),
    ("list_services", ["-n", "shop", "--health", "down", "--health", "degraded", "--limit", "2"],
     {"namespace": "shop", "health": ["down", "degraded"], "limit": 2}),
    ("list_services", ["--health", "down,degraded"], {"health": ["down", "degraded"]}),
    ("analyze_config", ["--namespace", "shop", "--min-severity", "warning", "--codes",
                        "NS0101,NS0105"],
     {"namespace": "shop", "minSeverity": "warning", "codes": ["NS0101", "NS0105"]}),
    ("find_blocking_policies", ["--source", "Deployment/shop/frontend", "--destination",
                                "Deployment/shop/checkout", "--port", "8443"],
     {"source": "Deployment/shop/frontend", "destination": "Deployment/shop/checkout",
      "port": 8443}),
    ("diff_routes", ["--host", "shop.example.com", "--headers", "x-user=a=b", "--headers",
                     "x-env=prod"],
     {"host": "shop.example.com", "headers": {"x-user": "a=b", "x-env": "prod"}}),
])
def test_flags_answer_as_the_same_arguments_in_json(tool: str, flags: list[str],
                                                    args: dict[str, Any]) -> None:
    flag_code, by_flags = run("call", tool, "-f", SHOP, *flags)
    json_code, by_json = run("call", tool, "-f", SHOP, "--args", json.dumps(args))
    assert flag_code == json_code == EXIT_OK, by_flags
    assert without_timestamp(by_flags) == without_timestamp(by_json)


def test_flags_win_over_args() -> None:
    _, data = run("call", "list_services", "-f", SHOP, "--args", '{"limit": 1, "namespace": '
                  '"shop"}', "--limit", "3")
    assert data["page"]["returned"] == 3
    assert {s["service"].split("/")[0] for s in data["services"]} == {"shop"}


def test_every_property_of_every_tool_is_a_flag() -> None:
    for tool in TOOLS.values():
        parser = Parser()
        schema = tool.input_schema()
        assert add_tool_flags(parser, schema, reserved={"-h", "--help"}) == []
        assert ("-n" in parser._option_string_actions) == ("namespace" in schema["properties"])


SCHEMA = {
    "$defs": {"Mode": {"enum": ["fast", "slow"], "type": "string"}},
    "properties": {
        "count": {"type": "integer", "description": "how many"},
        "ratio": {"anyOf": [{"type": "number"}, {"type": "null"}]},
        "port": {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]},
        "mode": {"$ref": "#/$defs/Mode"},
        "modes": {"type": "array", "items": {"$ref": "#/$defs/Mode"}},
        "ports": {"type": "array", "items": {"type": "integer"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "shape": {"type": "object", "properties": {"a": {"type": "integer"}}},
        "keep": {"type": "boolean", "default": True},
        "sourceNamespace": {"type": "string"},
        "output": {"type": "string"},
    },
    "required": ["count"],
}


def parse(*argv: str) -> dict[str, Any]:
    parser = Parser(prog="t")
    parser.add_argument("--output")
    left = add_tool_flags(parser, SCHEMA, reserved={"-h", "--help", "--output"})
    assert left == ["output"]  # a flag the command holds: --args only
    return tool_arguments(parser.parse_args(list(argv)))


def test_values_are_typed_as_the_schema_types_them() -> None:
    assert parse() == {}
    assert parse("--count", "3", "--ratio", "0.5", "--port", "5432", "--mode", "fast",
                 "--modes", "fast,slow", "--ports", "80", "--ports", "443,8443",
                 "--labels", "app=web", "--shape", '{"a": 1}', "--no-keep",
                 "--source-namespace", "shop") == {
        "count": 3, "ratio": 0.5, "port": 5432, "mode": "fast", "modes": ["fast", "slow"],
        "ports": [80, 443, 8443], "labels": {"app": "web"}, "shape": {"a": 1}, "keep": False,
        "sourceNamespace": "shop"}
    assert parse("--port", "http")["port"] == "http"


@pytest.mark.parametrize("argv", [
    ["--count", "three"], ["--mode", "medium"], ["--labels", "novalue"],
    ["--shape", "{not json"], ["--ports", "eighty"], ["--unknown", "1"],
])
def test_bad_flag_values_are_usage_errors(argv: list[str],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        parse(*argv)
    assert exit_.value.code == EXIT_USAGE
    assert argv[0] in capsys.readouterr().err


def test_help_of_a_flag_is_the_schemas_description(capsys: pytest.CaptureFixture[str]
                                                   ) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["call", "find_blocking_policies", "--help"])
    assert exit_.value.code == EXIT_OK
    text = " ".join(capsys.readouterr().out.split())
    properties = TOOLS["find_blocking_policies"].input_schema()["properties"]
    for name in ("source", "destination", "port"):
        description = " ".join(properties[name]["description"].split()).rstrip(".")
        assert f"{description} (required)" in text
