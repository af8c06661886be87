"""Every argument naming an object takes the same forms in every tool, a port is a number,
a numeric string or (where one object resolves it) a name, and bad values get messages
that name the argument and say what to send, in no library's words."""

from __future__ import annotations

import re
from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.tools import TOOLS, call_tool
from netsight.graph.store.live import GraphView
from tests.conftest import store_from_yaml

CLUSTER = """
apiVersion: v1
kind: Pod
metadata: {name: postgres-0, namespace: data, labels: {app: postgres}}
spec:
  containers: [{name: db, ports: [{name: pg, containerPort: 5432}]}]
status: {podIP: 10.0.1.5, podIPs: [{ip: 10.0.1.5}], phase: Running,
         conditions: [{type: Ready, status: "True"}]}
---
apiVersion: v1
kind: Service
metadata: {name: postgres, namespace: data}
spec:
  clusterIP: 10.96.0.10
  selector: {app: postgres}
  ports: [{name: postgres, port: 6432, targetPort: pg}]
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop, labels: {app: web}}
spec: {containers: [{name: web}]}
status: {podIP: 10.0.2.7, podIPs: [{ip: 10.0.2.7}], phase: Running}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: infra}
spec:
  gatewayClassName: example
  listeners: [{name: http, port: 80, protocol: HTTP}]
status:
  addresses: [{type: IPAddress, value: 203.0.113.9}]
"""

SERVICE_FORMS = ["data/postgres", "Service/data/postgres", "postgres.data.svc",
                 "postgres.data.svc.cluster.local", "ip:10.96.0.10"]


@pytest.fixture(scope="module")
def view() -> GraphView:
    return store_from_yaml(CLUSTER).view()


def answer(view: GraphView, tool: str, **args: Any) -> dict[str, Any]:
    return to_json(call_tool(view, tool, args), detail=False)


def failure(view: GraphView, tool: str, **args: Any) -> ToolFailure:
    with pytest.raises(ToolFailure) as caught:
        call_tool(view, tool, args)
    return caught.value


def without(data: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in ("metadata", *keys)}


@pytest.mark.parametrize("form", SERVICE_FORMS)
def test_diagnose_service_takes_every_form(view: GraphView, form: str) -> None:
    assert without(answer(view, "diagnose_service", service=form)) == \
        without(answer(view, "diagnose_service", service="data/postgres"))


POD_FORMS = ["Pod/data/postgres-0", "data/postgres-0", "ip:10.0.1.5"]


# The Service's port 6432 is its pods' 5432: the answer names the port asked about.
@pytest.mark.parametrize(("form", "port"), [(f, 6432) for f in SERVICE_FORMS] +
                         [(f, 5432) for f in POD_FORMS])
@pytest.mark.parametrize("spelled", [int, str])
def test_find_blocking_policies_takes_every_form(view: GraphView, form: str, port: int,
                                                 spelled: type) -> None:
    got = answer(view, "find_blocking_policies", source="shop/web", destination=form,
                 port=spelled(port))
    assert got["port"] == port
    assert got["destination"] == form
    assert got["allowed"] is True


@pytest.mark.parametrize(("destination", "port", "number"), [
    ("postgres.data.svc", "postgres", 6432),  # a Service port's name
    ("Pod/data/postgres-0", "pg", 5432),      # a container port's name
])
def test_port_names_resolve_on_the_destination(view: GraphView, destination: str,
                                               port: str, number: int) -> None:
    for tool in ("find_blocking_policies", "who_can_reach"):
        extra = {"source": "shop/web"} if tool == "find_blocking_policies" else {}
        got = answer(view, tool, destination=destination, port=port, **extra)
        assert got["port"] == number


def test_an_unknown_port_name_lists_the_names_that_exist(view: GraphView) -> None:
    failed = failure(view, "find_blocking_policies", source="shop/web",
                     destination="data/postgres", port="http")
    assert failed.code is ErrorCode.NOT_FOUND
    assert failed.message.startswith("port: ")
    assert "postgres" in failed.message


@pytest.mark.parametrize("form", ["infra/edge", "Gateway/infra/edge", "ip:203.0.113.9"])
def test_gateway_arguments_take_every_form(view: GraphView, form: str) -> None:
    assert answer(view, "gateway_get", gateway=form)["gateway"]["gateway"] == "infra/edge"
    assert len(answer(view, "check_gateway_status", gateway=form)["gateways"]) == 1


@pytest.mark.parametrize(("tool", "args", "argument"), [
    ("gateway_get", {"gateway": "postgres.data.svc"}, "gateway"),
    ("gateway_get", {"gateway": "Service/data/postgres"}, "gateway"),
    ("diagnose_service", {"service": "Pod/data/postgres-0"}, "service"),
    ("check_route_resolution", {"route": "ip:10.0.0.1"}, "route"),
    ("recent_changes", {"around": "ip:192.0.2.77"}, "around"),
])
def test_a_form_naming_another_kind_is_refused_saying_what_to_send(
        view: GraphView, tool: str, args: dict[str, Any], argument: str) -> None:
    failed = failure(view, tool, **args)
    assert failed.code in (ErrorCode.INVALID_INPUT, ErrorCode.NOT_FOUND)
    assert failed.message.startswith(f"{argument}: ")
    assert "namespace/name" in failed.message


@pytest.mark.parametrize("form", ["data/postgres", "postgres.data.svc", "ip:10.96.0.10"])
def test_recent_changes_takes_every_form(view: GraphView, form: str) -> None:
    assert answer(view, "recent_changes", around=form)["changes"] == \
        answer(view, "recent_changes", around="Service/data/postgres")["changes"]


# Pydantic's own words: union members, validator names, type expressions, private names.
INTERNALS = re.compile(r"function-|constrained-|lax-or-strict|json-or-python|[\w-]\[|"
                       r"(?<![\w'])_[a-z]\w*|\bNone\b|\bTrue\b|\bFalse\b")
VALID = {"source": "shop/web", "destination": "data/postgres", "service": "data/postgres",
         "gateway": "infra/edge", "port": 6432, "ports": [5432], "host": "shop.example.com",
         "signature": "0123456789ab", "code": "NS0101", "note": "selector fixed",
         "name": "postgres.data",
         "proposed": "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n"
                     "metadata: {name: p, namespace: data}\nspec: {podSelector: {}}\n"}


def bad_values(schema: dict[str, Any]) -> list[Any]:
    """Values of another type than every type ``schema`` allows, and edge values of those."""
    types = {s.get("type") for s in schema.get("anyOf", [schema])} - {"null", None}
    values: list[Any] = []
    if "string" not in types:
        values.append("not-a-value")
    else:
        values += ["", "a b/c/d/e", "x" * 300]
    if "integer" not in types and "number" not in types:
        values.append(7)
    else:
        values += [0, -1, 10**12]
    if "boolean" not in types:
        values.append(True)
    if "array" not in types:
        values.append(["x"])
    else:
        values += [[{}], ["", 0]]
    if "object" not in types:
        values.append({"k": "v"})
    else:
        values.append({"k": 0})
    return values


CASES = [(name, prop, bad) for name, tool in sorted(TOOLS.items())
         for prop, schema in tool.input_schema()["properties"].items()
         for bad in bad_values(schema)]


@pytest.mark.parametrize(("tool", "argument", "bad"), CASES,
                         ids=[f"{t}-{a}-{i}" for i, (t, a, _) in enumerate(CASES)])
def test_bad_values_get_messages_in_the_callers_words(
        view: GraphView, tool: str, argument: str, bad: Any) -> None:
    schema = TOOLS[tool].input_schema()
    args = {k: VALID[k] for k in schema.get("required", [])}
    args[argument] = bad
    try:
        call_tool(view, tool, args)
    except ToolFailure as failed:
        message = failed.message
    else:
        # Some edge values are valid (a limit of 10**12 is not, a cursor "" is...): only a
        # value of another type than the schema allows must fail.
        assert not _wrong_type(schema["properties"][argument], bad), (tool, argument, bad)
        return
    # One sentence per bad argument, each starting with its name (a sentence may hold "; ").
    names = "|".join(map(re.escape, schema["properties"]))
    sentences = re.split(rf"; (?=(?:{names})[.:])", message)
    mine = [m for m in sentences if re.match(rf"{re.escape(argument)}[.:]", m)]
    assert mine, f"no message names {argument}: {message}"
    for text in mine:
        assert not INTERNALS.search(text), text
        # What to send: more than the argument's name and a verdict.
        assert len(text) > len(argument) + 20, text


def _wrong_type(schema: dict[str, Any], value: Any) -> bool:
    types = {s.get("type") for s in schema.get("anyOf", [schema])} - {None}
    kind = {bool: "boolean", int: "integer", str: "string", list: "array", dict: "object"}
    named = kind.get(type(value))
    return named not in types and not (named == "integer" and "number" in types)


def test_port_zero_says_what_a_port_is(view: GraphView) -> None:
    failed = failure(view, "find_blocking_policies", source="shop/web",
                     destination="data/postgres", port=0)
    assert failed.code is ErrorCode.INVALID_INPUT
    assert failed.message == "port: 0 is not a port: give a number from 1 to 65535 or a port " \
        "name (lowercase letters, digits and '-', at least one letter, at most 15 characters)"
