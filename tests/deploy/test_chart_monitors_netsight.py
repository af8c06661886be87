"""Monitoring from the chart: a ServiceMonitor whose scrape netsight lets in, alerts whose
every series and label netsight really exports, a NetworkPolicy that lets netsight reach the
API server, DNS and the OTLP collector and nothing else, and OTLP settings that netsight
exports with.

Every rendering is validated as the other chart tests validate theirs: kubernetes-validate,
strict, three Kubernetes versions, and the ServiceMonitor and PrometheusRule against the CRD
schemas of prometheus-operator v0.93.0 (tests/deploy/schemas). The alerts' PromQL is parsed
(promql-parser) and checked against a real scrape of a netsight serving the simulator.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import promql_parser
import pytest
from mcp import Client
from prometheus_client.parser import text_string_to_metric_families

from netsight.analyzers.core.contracts import ErrorCode
from netsight.graph.store.sync_status import SyncState
from netsight.server.exporting import exporter_names
from tests.conftest import ROOT
from tests.deploy.conftest import CHART, RELEASE, RELEASE_NAMESPACE, Render, only, run_helm
from tests.deploy.conftest import validate_objects as validate
from tests.deploy.conftest import values as values_of
from tests.server.conftest import demo_sim, serving

FULLNAME = f"{RELEASE}-netsight"
MONITORED = ("default-values.yaml", "serviceMonitor.enabled=true", "prometheusRule.enabled=true")
EGRESS = ("default-values.yaml", "networkPolicy.enabled=true",
          "networkPolicy.egress.enabled=true",
          "networkPolicy.egress.apiServer[0].ipBlock.cidr=10.0.0.1/32")
RENDERINGS = [
    MONITORED,
    (*MONITORED, "serviceMonitor.auth=prometheus"),
    (*MONITORED, "serviceMonitor.auth=none", "auth.mode=none", "auth.insecureNoAuth=true"),
    ("default-values.yaml", "config.logFormat=json"),
    EGRESS,
    (*EGRESS, "networkPolicy.egress.dns=null",
     "networkPolicy.egress.collector[0].podSelector.matchLabels.app=otel-collector"),
    ("full-values.yaml",),
]
# Labels Prometheus gives every series of a target, and the histogram's bucket bound.
TARGET_LABELS = {"job", "namespace", "pod", "instance", "le"}


@pytest.mark.parametrize("rendering", RENDERINGS, ids="+".join)
def test_each_monitoring_value_renders_valid_objects(render: Render,
                                                     rendering: tuple[str, ...]) -> None:
    validate(render(*rendering))


def test_nothing_for_prometheus_is_rendered_unless_asked_for(render: Render) -> None:
    kinds = {o["kind"] for o in render("default-values.yaml")}
    assert not kinds & {"ServiceMonitor", "PrometheusRule", "Secret", "NetworkPolicy"}


# --- the scrape -------------------------------------------------------------------------------

def test_the_service_monitor_scrapes_metrics_of_this_releases_service(render: Render) -> None:
    objects = render(*MONITORED)
    monitor, service = only(objects, "ServiceMonitor"), only(objects, "Service")
    assert monitor["spec"]["selector"]["matchLabels"].items() <= \
        service["metadata"]["labels"].items()
    assert monitor["spec"]["namespaceSelector"]["matchNames"] == [RELEASE_NAMESPACE]
    [endpoint] = monitor["spec"]["endpoints"]
    assert endpoint["path"] == "/metrics"
    assert endpoint["port"] in {p["name"] for p in service["spec"]["ports"]}


def test_the_scrapers_token_may_get_metrics_and_nothing_else(render: Render) -> None:
    objects = render(*MONITORED)
    [endpoint] = only(objects, "ServiceMonitor")["spec"]["endpoints"]
    credentials = endpoint["authorization"]["credentials"]
    secret = next(o for o in objects if o["kind"] == "Secret")
    assert (secret["metadata"]["name"], "token") == (credentials["name"], credentials["key"])
    assert secret["type"] == "kubernetes.io/service-account-token"
    scraper = secret["metadata"]["annotations"]["kubernetes.io/service-account.name"]
    assert any(o["kind"] == "ServiceAccount" and o["metadata"]["name"] == scraper
               for o in objects)
    binding = next(o for o in objects if o["kind"] == "ClusterRoleBinding"
                   and o["subjects"][0]["name"] == scraper)
    role = next(o for o in objects if o["kind"] == "ClusterRole"
                and o["metadata"]["name"] == binding["roleRef"]["name"])
    # What netsight's SubjectAccessReview asks for /metrics (server/auth.py:
    # nonResourceAttributes path /metrics, verb get), and no more.
    assert role["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]


def test_the_readme_rbac_table_names_the_scrapers_grant() -> None:
    deploy = (ROOT / "README.md").read_text().partition("What the chart's RBAC grants")[2]
    table = deploy.partition("\n\n")[2].partition("\n\n")[0]
    assert "`serviceMonitor.auth=secret`" in table
    assert "the non-resource URL `/metrics`" in table


def test_prometheus_own_token_is_presented_from_the_file_given(render: Render) -> None:
    full = render("full-values.yaml")
    [endpoint] = only(full, "ServiceMonitor")["spec"]["endpoints"]
    assert endpoint["bearerTokenFile"] == values_of("full-values.yaml")["serviceMonitor"][
        "tokenFile"]
    assert "authorization" not in endpoint
    assert not [o for o in full if o["kind"] == "Secret"]
    none = render(*MONITORED, "serviceMonitor.auth=none", "auth.mode=none",
                  "auth.insecureNoAuth=true")
    [endpoint] = only(none, "ServiceMonitor")["spec"]["endpoints"]
    assert "authorization" not in endpoint
    assert "bearerTokenFile" not in endpoint


@pytest.mark.parametrize(("sets", "message"), [
    (("auth.audiences[0]=netsight",),
     "serviceMonitor.auth=secret hands Prometheus a service account token"),
    (("serviceMonitor.auth=token",), "/serviceMonitor/auth"),
    (("serviceMonitor.interval=30 seconds",), "/serviceMonitor/interval"),
    (("prometheusRule.toolErrorRatio=2",), "/prometheusRule/toolErrorRatio"),
])
def test_monitoring_values_that_cannot_work_fail_the_install(
        helm: Path, sets: tuple[str, ...], message: str) -> None:
    args = ["template", RELEASE, str(CHART), "--set", "config.clusterName=c"]
    for item in ("serviceMonitor.enabled=true", "prometheusRule.enabled=true", *sets):
        args += ["--set", item]
    done = run_helm(helm, *args)
    assert done.returncode != 0
    assert message in done.stderr


# --- the alerts -------------------------------------------------------------------------------

def selectors(node: Any) -> Iterator[tuple[str, dict[str, str]]]:
    """(metric name, {label: value}) of every vector selector in a parsed expression, and
    ("", {label: ""}) for every label an aggregation groups by."""
    kind = type(node).__name__
    if kind == "VectorSelector":
        yield node.name, {m.name: m.value for m in node.matchers.matchers}
        return
    if kind == "AggregateExpr" and node.modifier is not None:
        yield "", dict.fromkeys(node.modifier.labels, "")
    for attribute in ("lhs", "rhs", "expr", "args", "param", "vector_selector"):
        child = getattr(node, attribute, None)
        for item in child if isinstance(child, list) else [child]:
            if item is not None:
                yield from selectors(item)


@pytest.fixture(scope="module")
def scraped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, set[str]]]:
    """{sample name: {label: values seen}} of a real /metrics after a few tool calls."""
    import asyncio

    async def scrape() -> str:
        async with demo_sim() as sim, serving(sim, tmp_path_factory.mktemp("scrape")) as served:
            async with Client(served.mcp_url, mode="legacy") as client:
                await client.call_tool("diagnose_service", {"service": "shop/cart"})
                await client.call_tool("diagnose_service", {"service": "shop/nope"})
            async with aiohttp.ClientSession() as http, \
                    http.get(f"{served.url}/metrics") as response:
                assert response.status == 200
                return await response.text()

    samples: dict[str, dict[str, set[str]]] = {}
    for family in text_string_to_metric_families(asyncio.run(scrape())):
        for sample in family.samples:
            labels = samples.setdefault(sample.name, {})
            for label, value in sample.labels.items():
                labels.setdefault(label, set()).add(value)
    return samples


# Label values an alert may name that a short run does not produce: a domain of netsight's.
DOMAINS = {"netsight_error_code": {code.value for code in ErrorCode},
           "state": {state.value for state in SyncState}}


def test_every_alert_reads_series_and_labels_netsight_exports(
        render: Render, scraped: dict[str, dict[str, set[str]]]) -> None:
    rule = only(render(*MONITORED), "PrometheusRule")
    [group] = rule["spec"]["groups"]
    assert {r["alert"] for r in group["rules"]} == {
        "NetsightDown", "NetsightNotReady", "NetsightInformerStale", "NetsightToolErrors",
        "NetsightToolLatencyHigh"}
    grouped: set[str] = set()
    for alert in group["rules"]:
        expression = promql_parser.parse(alert["expr"])  # raises on a syntax error
        for name, matchers in selectors(expression):
            if not name:
                grouped |= set(matchers)
                continue
            assert matchers["job"] == FULLNAME  # the ServiceMonitor's job: the Service
            assert matchers["namespace"] == RELEASE_NAMESPACE
            if name == "up":  # Prometheus' own series of the target
                continue
            assert name in scraped, f"{alert['alert']}: netsight exports no {name}"
            for label, value in matchers.items():
                if label in TARGET_LABELS:
                    continue
                assert label in scraped[name], f"{alert['alert']}: {name} has no {label}"
                assert value in scraped[name][label] | DOMAINS.get(label, set()), \
                    f"{alert['alert']}: {name}{{{label}}} is never {value!r}"
    exported = {label for labels in scraped.values() for label in labels}
    assert grouped - TARGET_LABELS <= exported


def test_alert_thresholds_are_the_values_given(render: Render) -> None:
    rule = only(render(*MONITORED, "prometheusRule.toolLatencyP99=0.25",
                       "prometheusRule.staleFor=2m"), "PrometheusRule")
    by_name = {r["alert"]: r for r in rule["spec"]["groups"][0]["rules"]}
    assert by_name["NetsightToolLatencyHigh"]["expr"].endswith("> 0.25")
    assert by_name["NetsightInformerStale"]["for"] == "2m"


# --- egress -----------------------------------------------------------------------------------

def test_egress_reaches_the_api_server_dns_and_the_collector_only(render: Render) -> None:
    given = values_of("full-values.yaml")["networkPolicy"]["egress"]
    policy = only(render("full-values.yaml"), "NetworkPolicy")
    assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
    api, dns, collector = policy["spec"]["egress"]
    assert api["to"] == given["apiServer"]
    assert [p["port"] for p in api["ports"]] == given["apiServerPorts"]
    assert {(p["port"], p["protocol"]) for p in dns["ports"]} == {(53, "UDP"), (53, "TCP")}
    assert dns["to"][0]["podSelector"]["matchLabels"] == {"k8s-app": "kube-dns"}
    assert collector["to"] == given["collector"]
    assert [p["port"] for p in collector["ports"]] == given["collectorPorts"]


def test_egress_stays_open_unless_restricted(render: Render) -> None:
    policy = only(render("default-values.yaml", "networkPolicy.enabled=true"), "NetworkPolicy")
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    assert "egress" not in policy["spec"]


def test_egress_without_the_api_server_is_refused(helm: Path) -> None:
    done = run_helm(helm, "template", RELEASE, str(CHART), "--set", "config.clusterName=c",
                    "--set", "networkPolicy.enabled=true",
                    "--set", "networkPolicy.egress.enabled=true")
    assert done.returncode != 0
    assert "networkPolicy.egress.apiServer" in done.stderr


# --- OTLP -------------------------------------------------------------------------------------

def test_the_full_example_exports_over_the_protocol_of_its_port(
        render: Render, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example once pointed OTLP/HTTP at 4317, a gRPC port, and lost every span."""
    container = only(render("full-values.yaml"), "Deployment")["spec"]["template"]["spec"][
        "containers"][0]
    env = {e["name"]: e["value"] for e in container["env"] if "value" in e}
    for variable, value in env.items():
        if variable.startswith("OTEL_"):
            monkeypatch.setenv(variable, value)
    assert env["OTEL_EXPORTER_OTLP_ENDPOINT"].endswith(":4317")
    assert exporter_names("traces") == ["otlp_proto_grpc"]
    assert exporter_names("logs") == ["otlp_proto_grpc"]
