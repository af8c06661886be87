"""Every tool of the catalog, called with arguments generated from its JSON input schema (what
an MCP client sees), answers or refuses: an answer that serialises to JSON, or a ToolFailure
with any code but INTERNAL_ERROR; never an exception out of ``call_tool``.

The arguments mostly fit the schema, with strings drawn from the graph's own names (so that
calls get past "not found" into the analysis), patterns and enums honoured; some do not fit
(wrong types, unknown arguments, values that look like numbers or names and are not) and a
few are hostile (megabytes, deep nesting, YAML alias bombs in ``proposed``). The graph joins
a dozen testdata clusters (Gateway API, Ingress, Istio, NetworkPolicy, Calico, Cilium, admin
policies, Services); calls go through the whole graph and through views scoped to one
namespace or none.

The graph's objects are fuzzed too: a cluster's objects are other teams' input, so each
example loads the small hostile cluster with one testdata object changed in one to three
fields (any shape: a number for a list, a list for a name, "²" for a port) and calls every
tool on it.

The default run tries ``EXAMPLES`` of each; ``pytest -m fuzz`` runs ``LONG_EXAMPLES`` (not
run by default).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.tools import TOOLS, call_tool
from netsight.graph.store.live import GraphStore, GraphView, Source
from netsight.graph.store.scoped import ScopedView
from tests.analyzers.hostile import HIDDEN, VISIBLE
from tests.analyzers.test_testdata import TESTDATA
from tests.conftest import store_from_yaml

EXAMPLES = 100
LONG_EXAMPLES = 1500
CLUSTERS = [
    "diff_routes/hidden-gateway-is-a-layer-without-its-name",
    "diff_routes/weighted-backends-filters-and-mirror",
    "diff_routes/vs-mesh-first-match-weights-and-subsets",
    "diff_routes/listenerset-listeners",
    "gateway_get/tcp-udp-tls-routes-per-listener",
    "gateway_api/policies-attached-to-a-gateway",
    "mesh_config/destination-subsets",
    "check_mesh_config/regexes-judged-by-re2",
    "network_policies/calico-findings",
    "network_policies/cilium-findings",
    "network_policies/anp-priority-shared",
    "find_blocking_policies/anp-port-range-and-named-port",
    "services/headless-named-port-remap",
]
PROPOSED = [json.loads((case / "query.json").read_text())["args"]["proposed"]
            for case in sorted(TESTDATA.glob("diff_routes/*"))
            if "proposed" in (case / "query.json").read_text()]


@functools.cache
def store() -> GraphStore:
    texts = [(TESTDATA / case / "cluster.yaml").read_text() for case in CLUSTERS]
    return store_from_yaml("\n---\n".join([*texts, VISIBLE, HIDDEN]), Source.CLUSTER)


@functools.cache
def documents() -> list[str]:
    """Each object of the graph's input as YAML text: material for proposals."""
    texts = [(TESTDATA / case / "cluster.yaml").read_text() for case in CLUSTERS]
    found = []
    for text in texts:
        found += [yaml.safe_dump(d) for d in yaml.safe_load_all(text) if isinstance(d, dict)]
    return found


@functools.cache
def words() -> dict[str, list[str]]:
    """Strings the graph knows, by what they name: namespaces, "namespace/name", keys and
    endpoints ("Kind/namespace/name", "ip:..."), hosts, and others."""
    view = store().view()
    found: dict[str, set[str]] = {"namespace": set(view.namespaces()), "name": set(),
                                  "end": set(), "host": set(), "other": set()}
    for kind in view.kinds():
        for record in view.for_each(kind):
            if not record.namespace:
                found["other"].add(record.key)
                continue
            named = f"{record.namespace}/{record.name}"
            found["name"].add(named)
            found.setdefault(kind, set()).add(named)
            if kind in ("Pod", "Service", "Deployment", "StatefulSet", "DaemonSet"):
                found["end"].add(named if kind == "Pod" else f"{kind}/{named}")
    text = "\n".join(documents())
    found["host"].update(re.findall(r"\b[a-z0-9.-]+\.(?:com|example|local|io)\b", text))
    found["end"].update(f"ip:{ip}" for ip in re.findall(r"\b\d+\.\d+\.\d+\.\d+\b", text))
    found["other"].update(("mesh", "gateway shop/ingress", "gateway istio-system/ingress",
                           "gateway infra/edge", "TCP", "UDP", "SCTP", "GET", "POST", "/",
                           "/api", "http", "grpc", "1h", "90s", "2025-06-01T10:00:00Z", "0",
                           "NS0101", "nginx", "mesh_config", "services", "HTTPRoute"))
    found["method"] = {"GET", "POST", "DELETE", "get"}
    found["protocol"] = {"TCP", "UDP", "SCTP", "tcp"}
    found["path"] = {"/", "/api", "/cart", "/reviews/api/1", "/a?b=c", "/grpc.Svc/Method"}
    return {key: sorted(w for w in values if w) for key, values in found.items()}


def vocabulary() -> list[str]:
    return [word for group in words().values() for word in group]


# Which words an argument takes, by its name.
TAKES = {"namespace": "namespace", "namespaces": "namespace", "sourceNamespace": "namespace",
         "service": "Service", "gateway": "Gateway", "route": "HTTPRoute",
         "expectedBackend": "Service", "pods": "Pod", "source": "end", "destination": "end",
         "around": "end", "host": "host", "method": "method", "protocol": "protocol",
         "protocols": "protocol", "path": "path"}


# Values that look like what is asked for and are not, or are far too large.
ODD_STRINGS = ["", " ", "²", "٣", "\x00", "\ud800", "a\n", "shop\n/web", "../../etc",
               "9" * 5000, "9999999999d", "-1", "1e309", "NaN", "ip:fe80::1%" + "e" * 300,
               "x" * 70_000, "*" * 300, "a/b/c/d", "Service//", "//", "\u202e"]
ODD_VALUES: list[Any] = [None, True, 10**30, -(10**30), 1.5, float("inf"), [], {}, [[[]]],
                         {"a": {"b": {}}}, 10**5000]
BOMB = "x: &r [" + ", ".join(["r"] * 50) + "]\ny: [" + ", ".join(["*r"] * 20_000) + "]\n"
DEEP = "[" * 2000 + "]" * 2000


def strings(schema: dict[str, Any], name: str) -> st.SearchStrategy[Any]:
    pattern = schema.get("pattern")
    if pattern and name not in TAKES:
        return st.one_of(st.from_regex(pattern, fullmatch=True), st.from_regex(pattern),
                         st.sampled_from(ODD_STRINGS))
    choices = [st.sampled_from(words()[TAKES.get(name, "other")])] * 7 + [
        st.sampled_from(vocabulary()), st.text(max_size=40), st.sampled_from(ODD_STRINGS)]
    return _weighted(choices)


def _weighted(choices: list[st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of ``choices``, each as likely (one_of leans on the first ones as it searches)."""
    return st.integers(0, len(choices) - 1).flatmap(choices.__getitem__)


# Values a field of a proposed object may be given instead of its own: any shape.
ANY_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats()
    | st.sampled_from(ODD_STRINGS[:-3]) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                  max_size=3),
    max_leaves=6)


@functools.cache
def every_document() -> list[str]:
    """Each object of every testdata cluster, as YAML text."""
    found = set()
    for path in sorted(TESTDATA.glob("*/*/cluster.yaml")):
        try:
            found.update(yaml.dump(d, Dumper=yaml.CSafeDumper)
                         for d in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader)
                         if isinstance(d, dict))
        except (yaml.YAMLError, ValueError):
            continue  # a case about input that does not parse
    return sorted(found)


@st.composite
def changed_document(draw: st.DrawFn, among: tuple[str, ...] = ()) -> str:
    """A document of the graph's input (or of ``among``) with one to three fields, at any
    depth, given other values (any shape analyzers must read without failing)."""
    document = yaml.load(draw(st.sampled_from(among or documents())), Loader=yaml.CSafeLoader)
    for _ in range(draw(st.integers(1, 3))):
        _change(draw, document)
    return yaml.safe_dump(document)  # libyaml refuses a lone surrogate ("\ud800")


def _change(draw: st.DrawFn, document: Any) -> None:
    node: Any = document
    while True:
        keys = list(node) if isinstance(node, dict) else list(range(len(node))) \
            if isinstance(node, list) else []
        if not keys:
            break
        key = draw(st.sampled_from(keys))
        child = node[key]
        if not isinstance(child, dict | list) or not child or draw(st.integers(0, 3)) == 0:
            node[key] = draw(ANY_VALUE)
            break
        node = child


def proposals() -> st.SearchStrategy[str]:
    picked = st.lists(st.sampled_from(documents()), min_size=1, max_size=3).map(
        "---\n".join)
    swapped = st.tuples(st.sampled_from(documents()), st.sampled_from(vocabulary()),
                        st.sampled_from(vocabulary())).map(lambda t: t[0].replace(t[1], t[2]))
    changed = st.lists(changed_document(), min_size=1, max_size=2).map("---\n".join)
    return _weighted([st.sampled_from(PROPOSED), picked, swapped, changed, changed, changed,
                      st.just(BOMB), st.just(DEEP), st.text(max_size=60)])


def _fitting(schema: dict[str, Any], defs: dict[str, Any], name: str) -> st.SearchStrategy[Any]:
    if "$ref" in schema:
        return _fitting(defs[schema["$ref"].rpartition("/")[2]], defs, name)
    if "anyOf" in schema:
        return st.one_of(*(_fitting(s, defs, name) for s in schema["anyOf"]))
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        return proposals() if name == "proposed" else strings(schema, name)
    if kind == "integer":
        low, high = schema.get("minimum"), schema.get("maximum")
        inside = st.integers(low, high)
        return _weighted([inside] * 7 + [st.integers(-(2**40), 2**40)])
    if kind == "number":
        inside = st.floats(schema.get("minimum", schema.get("exclusiveMinimum")),
                           schema.get("maximum"), exclude_min="exclusiveMinimum" in schema)
        return st.one_of(inside, inside, st.floats())
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        items = _fitting(schema.get("items", {}), defs, name)
        return st.lists(items, min_size=schema.get("minItems", 0),
                        max_size=min(schema.get("maxItems", 4), 4))
    if kind == "object":
        extra = schema.get("additionalProperties")
        inner = _fitting(extra, defs, name) if isinstance(extra, dict) else st.text()
        return st.dictionaries(st.sampled_from(vocabulary()) | st.text(max_size=10), inner,
                               max_size=3)
    return st.sampled_from(ODD_VALUES)


@st.composite
def arguments(draw: st.DrawFn, tool: str) -> dict[str, Any]:
    """Arguments fitting the schema; in one call of five, one of them does not, or an
    unknown one is added."""
    schema = TOOLS[tool].args.model_json_schema()
    defs = schema.get("$defs", {})
    required = set(schema.get("required", ()))
    found: dict[str, Any] = {}
    for name, spec in schema["properties"].items():
        if name in required or draw(st.booleans()):
            found[name] = draw(_fitting(spec, defs, name))
    odd = draw(st.integers(0, 9))
    if odd == 0 and found:
        found[draw(st.sampled_from(sorted(found)))] = draw(st.sampled_from(ODD_VALUES))
    elif odd == 1:
        found[draw(st.sampled_from(vocabulary()))] = draw(st.sampled_from(ODD_VALUES))
    return found


def views() -> Iterator[GraphView]:
    whole = store().view()
    yield whole
    yield ScopedView(whole, {"shop"})
    yield ScopedView(whole, set())


def survives(tool: str, view: GraphView, args: dict[str, Any]) -> None:
    try:
        result = call_tool(view, tool, args)
    except ToolFailure as failure:
        error = failure.to_error()
        assert error.code != ErrorCode.INTERNAL_ERROR, (error.message, args)
        json.dumps(error.model_dump(mode="json"), allow_nan=False)
        return
    json.dumps(to_json(result, detail=True), allow_nan=False)


def fuzz(tool: str, examples: int) -> None:
    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
    @given(args=arguments(tool), which=st.integers(0, 2))
    def check(args: dict[str, Any], which: int) -> None:
        survives(tool, list(views())[which], args)

    check()


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_a_tool_answers_or_refuses_generated_arguments(tool: str) -> None:
    fuzz(tool, EXAMPLES)


@pytest.mark.fuzz
@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_a_tool_answers_or_refuses_many_generated_arguments(tool: str) -> None:
    fuzz(tool, LONG_EXAMPLES)


# --- the graph's objects: any field of any shape ------------------------------------------

# Arguments that reach each tool's analysis on the hostile cluster (visible.yaml).
REACHING: dict[str, dict[str, Any]] = {
    "diagnose_service": {"service": "shop/web"},
    "diff_routes": {"host": "shop.example.com", "expected_backend": "shop/web"},
    "find_blocking_policies": {"source": "shop/client", "destination": "shop/web-1",
                               "port": 8080},
    "reachability_matrix": {"ports": [8080, 80]},
    "who_can_reach": {"destination": "Service/shop/web", "port": 80},
    "what_can_reach": {"source": "shop/client"},
    "gateway_get": {"gateway": "shop/gw"},
}
EXTRA_CALLS = [("diff_routes", {"host": "shop.example.com", "via": "mesh",
                                "source_namespace": "shop"}),
               ("diff_routes", {"host": "shop.example.com", "via": "gateway shop/ingress"}),
               ("what_can_reach", {"source": "shop/client", "port": 8080})]


def odd_graph(changed: str) -> GraphView:
    return store_from_yaml(f"{VISIBLE}\n---\n{changed}", Source.CLUSTER).view()


def fuzz_graph(examples: int) -> None:
    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
    @given(changed=changed_document(tuple(every_document())),
           namespace=st.sampled_from(["shop", None]))
    def check(changed: str, namespace: str | None) -> None:
        if namespace is not None:  # into the namespace the calls are about
            changed = re.sub(r"(?m)^  namespace: .*$", f"  namespace: {namespace}", changed)
        view = odd_graph(changed)
        calls = [(tool, {"detail": True, **REACHING.get(tool, {})}) for tool in TOOLS]
        for tool, args in [*calls, *EXTRA_CALLS]:
            survives(tool, view, args)

    check()


def test_every_tool_survives_an_object_with_a_field_of_any_shape() -> None:
    """A cluster's objects are other teams' input: one policy or route written oddly (a
    port "²", a rule that is a number) is reported or left out, and breaks no tool."""
    fuzz_graph(EXAMPLES)


@pytest.mark.fuzz
def test_every_tool_survives_many_objects_with_a_field_of_any_shape() -> None:
    fuzz_graph(LONG_EXAMPLES)


def test_the_scoped_view_sees_something() -> None:
    """Calls through it reach the analysis, not only "not found"."""
    assert ScopedView(store().view(), {"shop"}).count("Service")
