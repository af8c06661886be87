"""`netsight call` and `netsight tools`: the structured answers, their modes and their errors."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from netsight.cli import EXIT_TOOL_ERROR, EXIT_USAGE, main
from tests.conftest import ROOT

SHOP = str(ROOT / "examples" / "shop")


def run(*argv: str, stdin: str = "") -> tuple[int, Any]:
    out = io.StringIO()
    code = main(list(argv), stdin=io.StringIO(stdin), stdout=out)
    text = out.getvalue()
    try:
        return code, json.loads(text)
    except json.JSONDecodeError:
        return code, text


def error_of(*argv: str, stdin: str = "") -> dict[str, Any]:
    code, data = run(*argv, stdin=stdin)
    assert code == EXIT_TOOL_ERROR, data
    assert set(data) <= {"code", "message", "tool", "detail"}, data
    return data


# --- answers ---------------------------------------------------------------------------------


def test_analyze_config_reports_the_shop_faults() -> None:
    code, data = run("call", "analyze_config", "-f", SHOP)
    assert code == 0
    found = sorted((f["code"], f["resource"]["name"]) for f in data["findings"])
    assert found == [("NS0101", "cart"), ("NS0105", "checkout"), ("NS0111", "payments-gateway"),
                     ("NS0302", "postgres")]
    assert data["counts"] == {"critical": 2, "warning": 2}
    meta = data["metadata"]
    assert meta["source"] == "manifests"
    assert meta["graphGeneration"] > 0
    assert meta["clusterName"]
    assert meta["timestamp"]
    assert meta["provider"] == "kubernetes"


def test_diagnose_service_answers_compactly_by_default() -> None:
    code, data = run("call", "diagnose_service", "-f", SHOP, "--args", '{"service": "shop/cart"}')
    assert code == 0
    assert data["status"] == "critical"
    assert data["selector"] == "app=cart,version=v1"
    (finding,) = data["findings"]
    assert set(finding) == {"code", "severity", "category", "resource", "summary", "signature"}
    assert finding["resource"] == {"kind": "Service", "name": "cart", "namespace": "shop",
                                   "apiVersion": "v1"}


def test_detail_adds_detail_suggestion_and_evidence_with_field_paths() -> None:
    code, data = run("call", "diagnose_service", "-f", SHOP, "--detail",
                     "--args", '{"service": "shop/checkout"}')
    assert code == 0
    (finding,) = data["findings"]
    assert finding["code"] == "NS0105"
    assert finding["equivalentCodes"] == ["KIA0701"]
    assert "http-api" in finding["detail"]
    assert finding["suggestion"]
    assert finding["evidence"] == [{
        "resource": {"kind": "Service", "name": "checkout", "namespace": "shop",
                     "apiVersion": "v1"},
        "fieldPath": "spec.ports[0].targetPort", "value": "https",
    }]


def test_detail_flag_in_args_equals_the_option() -> None:
    _, flag = run("call", "diagnose_service", "-f", SHOP, "--detail",
                  "--args", '{"service": "shop/cart"}')
    _, arg = run("call", "diagnose_service", "-f", SHOP,
                 "--args", '{"service": "shop/cart", "detail": true}')
    for data in (flag, arg):
        data["metadata"].pop("timestamp")
    assert flag == arg


@pytest.mark.parametrize(("tool", "args"), [
    ("diagnose_service", '{"service": "shop/cart"}'),
    ("diagnose_service", '{"service": "shop/frontend"}'),
    ("analyze_config", "{}"),
    ("list_services", "{}"),
])
def test_compact_answers_stay_under_500_tokens(tool: str, args: str) -> None:
    out = io.StringIO()
    assert main(["call", tool, "-f", SHOP, "--args", args], stdout=out) == 0
    compact = json.dumps(json.loads(out.getvalue()), separators=(",", ":"))
    # ~4 characters per token for JSON-heavy English text.
    assert len(compact) / 4 < 500, len(compact)


def test_list_services_orders_unhealthy_first_and_paginates() -> None:
    code, first = run("call", "list_services", "-f", SHOP, "--args", '{"limit": 2}')
    assert code == 0
    assert [s["health"] for s in first["services"]] == ["down", "down"]
    assert first["page"]["total"] == 5
    assert first["page"]["remaining"] == 3
    cursor = first["page"]["nextCursor"]
    _, second = run("call", "list_services", "-f", SHOP,
                    "--args", json.dumps({"limit": 2, "cursor": cursor}))
    names = [s["service"] for s in first["services"] + second["services"]]
    assert len(set(names)) == 4
    # Deployments only: endpoint health cannot be evaluated offline, so "unknown".
    assert first["counts"] == {"down": 2, "degraded": 1, "unknown": 2}


def test_text_output_is_readable() -> None:
    code, text = run("call", "analyze_config", "-f", SHOP, "-o", "text", "--detail")
    assert code == 0
    assert "[CRITICAL] NS0101 Service/shop/cart" in text
    assert "fix: " in text
    assert "at Service checkout spec.ports[0].targetPort" in text


def test_manifests_from_stdin_and_malformed_documents_become_findings() -> None:
    manifests = """
apiVersion: v1
kind: Service
metadata: {name: api, namespace: default}
spec:
  selector: {app: api}
  ports: [{port: 80, targetPort: 70000}]
---
this: [is not: valid
---
- just
- a list of strings
"""
    code, data = run("call", "analyze_config", "-f", "-", stdin=manifests)
    assert code == 0
    assert sorted(f["code"] for f in data["findings"]) == ["NS0001", "NS0002", "NS0002", "NS0003"]
    malformed = next(f for f in data["findings"] if f["code"] == "NS0003")
    assert "spec.ports[0].targetPort" in malformed["summary"]
    assert malformed["resource"]["name"] == "api"


def test_tools_lists_every_tool_with_its_schema() -> None:
    code, tools = run("tools")
    assert code == 0
    names = {t["name"] for t in tools}
    assert names == {"diagnose_service", "list_services", "analyze_config", "recent_changes",
                     "check_route_resolution", "check_gateway_status", "diff_routes",
                     "list_ingresses", "gateway_list", "gateway_get",
                     "find_blocking_policies", "reachability_matrix",
                     "k8s_networkpolicies", "who_can_reach", "what_can_reach",
                     "check_mesh_config", "explain_finding", "record_fix_note",
                     "check_dns_resolution", "istio_mtls_status", "diff_reachability",
                     "check_provider_status", "recent_events"}
    for tool in tools:
        # The one writer writes to netsight's own knowledge base, never to the cluster.
        assert tool["readOnly"] is (tool["name"] != "record_fix_note")
        assert tool["description"]
        props = tool["inputSchema"]["properties"]
        assert "detail" in props
        assert all(p.get("description") for p in props.values()), tool["name"]


# --- bad input -------------------------------------------------------------------------------

BAD_ARGS = [
    # (tool, args, error code, words the message must contain)
    ("diagnose_service", "{}", "INVALID_INPUT", ["service", "required"]),
    ("diagnose_service", '{"service": "cart"}', "INVALID_INPUT", ["service", "namespace/name"]),
    ("diagnose_service", '{"service": 42}', "INVALID_INPUT", ["service"]),
    ("diagnose_service", '{"service": "shop/Cart!"}', "INVALID_INPUT", ["service"]),
    ("diagnose_service", '{"service": "shop/cartt"}', "NOT_FOUND", ["shop/cartt", "'cart'"]),
    ("diagnose_service", '{"service": "nope/cart"}', "NOT_FOUND", ["nope/cart"]),
    ("diagnose_service", '{"service": "shop/cart", "sevice": 1}', "INVALID_INPUT",
     ["sevice", "unknown argument", "service"]),
    ("diagnose_service", '{"service": "shop/cart", "port": 0}', "INVALID_INPUT", ["port"]),
    ("diagnose_service", '{"service": "shop/cart", "port": 70000}', "INVALID_INPUT",
     ["port", "65535"]),
    ("diagnose_service", '{"service": "shop/cart", "port": 8080}', "NOT_FOUND",
     ["port", "grpc 9090/TCP"]),
    ("diagnose_service", '{"service": "shop/cart", "port": "HTTP_X"}', "INVALID_INPUT",
     ["port"]),
    ("diagnose_service", '{"service": "shop/cart", "port": "0"}', "INVALID_INPUT", ["port"]),
    ("diagnose_service", '{"service": "shop/cart", "detail": "yes"}', "INVALID_INPUT",
     ["detail"]),
    ("list_services", '{"namespace": "Shop"}', "INVALID_INPUT", ["namespace"]),
    ("list_services", '{"namespace": "shpo"}', "NOT_FOUND", ["shpo", "'shop'"]),
    ("list_services", '{"limit": 0}', "INVALID_INPUT", ["limit"]),
    ("list_services", '{"limit": 501}', "INVALID_INPUT", ["limit"]),
    ("list_services", '{"limit": "10"}', "INVALID_INPUT", ["limit"]),
    ("list_services", '{"health": ["sick"]}', "INVALID_INPUT", ["health"]),
    ("list_services", '{"cursor": "garbage"}', "INVALID_INPUT", ["cursor"]),
    ("analyze_config", '{"min_severity": "high"}', "INVALID_INPUT", ["min_severity"]),
    ("analyze_config", '{"codes": ["XX1"]}', "INVALID_INPUT", ["codes", "XX1"]),
    ("analyze_config", '{"analyzers": ["dns"]}', "INVALID_INPUT", ["analyzers", "services"]),
    ("analyze_config", '{"codes": []}', "INVALID_INPUT", ["codes"]),
    ("analyze_config", '{"analyzers": []}', "INVALID_INPUT", ["analyzers"]),
    ("analyze_config", '{"namespace": "nowhere"}', "NOT_FOUND", ["nowhere"]),
    ("analyze_config", '{"cursor": 5}', "INVALID_INPUT", ["cursor"]),
    ("analyze_config", "[1, 2]", "INVALID_INPUT", ["--args", "object"]),
    ("analyze_config", "{not json", "INVALID_INPUT", ["--args", "JSON"]),
]


@pytest.mark.parametrize(("tool", "args", "code", "words"), BAD_ARGS,
                         ids=[f"{t}:{a}" for t, a, _, _ in BAD_ARGS])
def test_bad_arguments_get_an_error_that_says_what_to_fix(
    tool: str, args: str, code: str, words: list[str]
) -> None:
    error = error_of("call", tool, "-f", SHOP, "--args", args)
    assert error["code"] == code
    assert error["tool"] == tool
    for word in words:
        assert word in error["message"], error["message"]
    assert "Traceback" not in error["message"]


def test_a_cursor_from_another_query_is_refused() -> None:
    _, first = run("call", "analyze_config", "-f", SHOP, "--args", '{"limit": 1}')
    cursor = first["page"]["nextCursor"]
    assert cursor
    error = error_of("call", "analyze_config", "-f", SHOP,
                     "--args", json.dumps({"limit": 1, "cursor": cursor, "namespace": "data"}))
    assert "cursor" in error["message"]
    assert error["code"] == "INVALID_INPUT"


def test_missing_paths_are_tool_errors() -> None:
    assert "no/such/dir" in error_of("call", "analyze_config", "-f", "no/such/dir")["message"]


def test_cursor_walk_covers_every_finding_once() -> None:
    seen: list[str] = []
    cursor = None
    while True:
        args: dict[str, Any] = {"limit": 1}
        if cursor:
            args["cursor"] = cursor
        _, data = run("call", "analyze_config", "-f", SHOP, "--args", json.dumps(args))
        seen.extend(f["summary"] for f in data["findings"])
        cursor = data["page"]["nextCursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == 4


def test_console_script_is_installed_and_exits_2_on_tool_errors(tmp_path: Path) -> None:
    exe = shutil.which("netsight", path=str(Path(sys.executable).parent))
    assert exe, "the netsight console script is not installed in this environment"
    ok = subprocess.run([exe, "call", "list_services", "-f", SHOP], capture_output=True,
                        text=True, check=False)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["page"]["total"] == 5
    bad = subprocess.run([exe, "call", "diagnose_service", "-f", SHOP, "--args", "{}"],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2
    assert json.loads(bad.stdout)["code"] == "INVALID_INPUT"


CONSOLE = """
import atexit, sys
from netsight.cli import console

class TornDown:
    def __del__(self) -> None:
        sys.stderr.write("heap torn down\\n")

kept = TornDown()  # a module global: freed only by the interpreter's teardown
atexit.register(lambda: sys.stderr.write("earlier exit handler ran\\n"))
sys.argv = ["netsight", *sys.argv[1:]]
console()
"""


@pytest.mark.parametrize(("argv", "status"), [
    (["call", "list_services", "-f", SHOP], 0),
    (["call", "diagnose_service", "-f", SHOP, "--args", "{}"], EXIT_TOOL_ERROR),
])
def test_console_exit_skips_the_heap_teardown_but_keeps_output_status_and_handlers(
        argv: list[str], status: int) -> None:
    done = subprocess.run([sys.executable, "-c", CONSOLE, *argv], capture_output=True,
                          text=True, check=False)
    assert done.returncode == status, done.stderr
    assert "earlier exit handler ran" in done.stderr
    assert "heap torn down" not in done.stderr
    json.loads(done.stdout)  # flushed whole before the exit


def test_console_usage_errors_take_the_normal_exit() -> None:
    done = subprocess.run([sys.executable, "-c", CONSOLE, "no-such-command"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == EXIT_USAGE
    assert "usage:" in done.stderr
    assert "earlier exit handler ran" in done.stderr
    assert "heap torn down" in done.stderr
