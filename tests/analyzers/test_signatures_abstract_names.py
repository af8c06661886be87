"""Finding signatures: two clusters' instances of one mistake share a signature, different
mistakes do not, and no name, address or port number of either cluster is in the text."""

from __future__ import annotations

import pytest

from netsight.analyzers.core.contracts import Evidence, Finding, ResourceRef, Severity
from netsight.analyzers.core.signatures import (
    SIGNATURE_FORM,
    FailureCategory,
    ProbeFailure,
    classify_probe,
    probe_signature,
    signature_of,
    string_shape,
    value_shape,
)
from netsight.analyzers.tools import call_tool
from tests.conftest import store_from_yaml


def service_and_pod(ns: str, name: str, selector: dict[str, str], labels: dict[str, str],
                    target_port: int | str = 8080, container_port: int = 8080,
                    port_name: str = "http", ip: str = "10.0.0.7") -> str:
    sel = "{" + ", ".join(f"{k}: {v}" for k, v in selector.items()) + "}"
    lab = "{" + ", ".join(f"{k}: {v}" for k, v in labels.items()) + "}"
    return f"""
apiVersion: v1
kind: Namespace
metadata: {{name: {ns}}}
---
apiVersion: v1
kind: Service
metadata: {{name: {name}, namespace: {ns}}}
spec:
  selector: {sel}
  ports: [{{port: 80, targetPort: {target_port}}}]
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}-0, namespace: {ns}, labels: {lab}}}
spec:
  containers:
  - name: main
    image: example/{name}:1
    ports: [{{name: {port_name}, containerPort: {container_port}}}]
status:
  phase: Running
  conditions: [{{type: Ready, status: "True"}}]
  podIP: {ip}
  podIPs: [{{ip: {ip}}}]
"""


def findings(yaml_text: str) -> list[Finding]:
    result = call_tool(store_from_yaml(yaml_text).view(), "analyze_config", {"limit": 500})
    return list(result.findings)  # type: ignore[attr-defined]


def one(yaml_text: str, code: str) -> Finding:
    found = [f for f in findings(yaml_text) if f.code == code]
    assert len(found) == 1, found
    return found[0]


def test_the_same_selector_typo_in_two_clusters_shares_a_signature() -> None:
    a = one(service_and_pod("shop", "cart", {"app": "cartt", "version": "v1"},
                            {"app": "cart", "version": "v1"}), "NS0101")
    b = one(service_and_pod("payments", "ledger", {"app": "ledgr", "version": "v7"},
                            {"app": "ledger", "version": "v7"}, ip="192.168.3.4"), "NS0101")
    assert a.signature is not None
    assert SIGNATURE_FORM.match(a.signature)
    assert a.signature == b.signature
    pattern = signature_of(a).pattern
    assert pattern == "NS0101::Service(spec.selector={2 labels: app,version})"
    for name in ("cart", "shop", "ledger", "payments", "v1", "10.0.0.7"):
        assert name not in pattern


def test_different_mistakes_have_different_signatures() -> None:
    two_labels = one(service_and_pod("shop", "cart", {"app": "cartt", "version": "v1"},
                                     {"app": "cart", "version": "v1"}), "NS0101")
    one_label = one(service_and_pod("shop", "cart", {"app": "cartt"}, {"app": "cart"}),
                    "NS0101")
    numeric = one(service_and_pod("shop", "cart", {"app": "cart"}, {"app": "cart"},
                                  target_port=9090), "NS0104")
    named = [f for f in findings(service_and_pod("shop", "cart", {"app": "cart"},
                                                 {"app": "cart"}, target_port="web"))
             if f.code == "NS0105"]
    signatures = {two_labels.signature, one_label.signature, numeric.signature,
                  named[0].signature}
    assert len(signatures) == 4


def test_unknown_label_keys_and_values_are_abstracted() -> None:
    assert value_shape({"team.acme.io/owner": "alice", "app": "x"}) == \
        "{2 labels: <key>,app}"
    assert value_shape({"app.kubernetes.io/name": "x"}) == "{1 label: app.kubernetes.io/name}"
    assert value_shape([{"port": 80, "protocol": "TCP"}, {"port": 443, "protocol": "TCP"}]) \
        == "[{port: <number>, protocol: TCP}]"
    assert [string_shape(s) for s in ("10.1.2.3", "fd00::1", "10.0.0.0/8", "shop/cart",
                                      "api.example.com", "*.example.com", "cart", "8080",
                                      "Deny", "")] == \
        ["<ip>", "<ip>", "<cidr>", "<ref>", "<host>", "<wildcard host>", "<name>",
         "<number>", "Deny", "<empty>"]


def test_evidence_order_and_indexes_do_not_change_the_signature() -> None:
    svc = ResourceRef(kind="Service", namespace="a", name="s")
    pod = ResourceRef(kind="Pod", namespace="a", name="p")
    first = [Evidence(resource=svc, field_path="spec.ports[0].targetPort", value=8080),
             Evidence(resource=pod, field_path="spec.containers[1].ports", value=[])]
    base = {"code": "NS0104", "severity": Severity.WARNING, "category": "connectivity",
            "resource": svc, "summary": "x"}
    one_order = Finding.model_validate({**base, "evidence": first})
    other = Finding.model_validate({**base, "evidence": [
        Evidence(resource=pod.model_copy(update={"name": "q"}),
                 field_path="spec.containers[0].ports", value=[]),
        Evidence(resource=svc, field_path="spec.ports[3].targetPort", value=9000)]})
    assert signature_of(one_order) == signature_of(other)
    assert signature_of(one_order).pattern == \
        "NS0104::Service(spec.ports[*].targetPort=<number>)::Pod(spec.containers[*].ports=[])"


def test_a_severity_other_than_the_codes_default_is_part_of_the_signature() -> None:
    svc = ResourceRef(kind="Service", namespace="a", name="s")
    base = {"code": "NS0105", "category": "connectivity", "resource": svc, "summary": "x"}
    critical = Finding.model_validate({**base, "severity": "critical"})
    warning = Finding.model_validate({**base, "severity": "warning"})
    assert signature_of(critical).pattern == "NS0105::Service()"
    assert signature_of(warning).pattern == "NS0105/warning::Service()"


@pytest.mark.parametrize(("failure", "category"), [
    (ProbeFailure("tcp", "refused", target_kind="Service", ready_endpoints=0),
     FailureCategory.NO_ENDPOINTS),
    (ProbeFailure("tcp", "timeout", target_kind="Service", ready_endpoints=2,
                  policy_denied=True), FailureCategory.POLICY_DENIED),
    (ProbeFailure("tcp", "refused", target_kind="Pod"), FailureCategory.CONNECTION_REFUSED),
    (ProbeFailure("tcp", "timeout", policy_denied=None), FailureCategory.TIMEOUT),
    (ProbeFailure("dns", "dns_failed"), FailureCategory.DNS_FAILURE),
    (ProbeFailure("http", "tls_failed"), FailureCategory.TLS_FAILURE),
    (ProbeFailure("tcp", "reset"), FailureCategory.CONNECTION_RESET),
    (ProbeFailure("tcp", "unreachable"), FailureCategory.UNREACHABLE),
    (ProbeFailure("http", "responded", http_status=503), FailureCategory.HTTP_SERVER_ERROR),
    (ProbeFailure("http", "responded", http_status=404), FailureCategory.HTTP_CLIENT_ERROR),
    (ProbeFailure("tcp", "error"), FailureCategory.PROBE_ERROR),
    (ProbeFailure("tcp", "something-new"), FailureCategory.UNKNOWN),
])
def test_failed_probes_are_classified(failure: ProbeFailure,
                                      category: FailureCategory) -> None:
    assert classify_probe(failure) is category
    signed = probe_signature(failure)
    assert signed is not None
    assert signed.pattern.startswith(f"PROBE::{category.value}::{failure.probe}->")


def test_answered_probes_have_no_signature_and_targets_are_abstracted() -> None:
    assert probe_signature(ProbeFailure("tcp", "connected")) is None
    assert probe_signature(ProbeFailure("http", "responded", http_status=200)) is None
    a = probe_signature(ProbeFailure("tcp", "refused", target_kind="Service",
                                     ready_endpoints=0))
    assert a is not None
    assert a.pattern == "PROBE::NO_ENDPOINTS::tcp->Service:<number>"
    # Every ProbeResult outcome is known to the classifier.
    from netsight.probes.message import Outcome

    for outcome in Outcome:
        assert classify_probe(ProbeFailure("tcp", outcome.value)) is not FailureCategory.UNKNOWN
