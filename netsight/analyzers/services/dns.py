"""How a name resolves from a pod, decided on the graph: the resolv.conf the kubelet writes
for the pod, the queries its resolver sends in order, and what cluster DNS answers each.

The kubelet (pkg/kubelet/network/dns) writes a ClusterFirst pod's resolv.conf with the
cluster DNS address, the search domains ``<ns>.svc.<domain> svc.<domain> <domain>`` then
the node's, and ``ndots:5``; a host-network pod gets that only with
ClusterFirstWithHostNet (with ClusterFirst it gets the node's, as with Default); None takes
dnsConfig alone; dnsConfig's nameservers and searches are appended and its options
override. The resolver (glibc's res_nsearch) tries a name with fewer dots than ndots under
each search domain first and as written last; one with at least ndots dots as written
first; one ending in a dot only as written. NXDOMAIN, an empty answer and SERVFAIL move it
to the next query; the first answer ends the search.

Cluster DNS answers as its Corefile says (cluster_dns.py) and, for cluster names, as the
kubernetes plugin does: a Service's ClusterIP, a headless Service's ready endpoints, an
ExternalName's CNAME, named ports as SRV records, pods by address when ``pods`` allows.
What netsight cannot know — the node's resolvers and search domains, what upstream
servers answer — is said, never guessed.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Evidence, Finding, ResourceRef
from netsight.analyzers.services.cluster_dns import (
    ClusterDNS,
    Kubernetes,
    Step,
    in_zone,
)
from netsight.analyzers.services.cluster_records import KubernetesRecords, undashed
from netsight.analyzers.services.corefile import fqdn
from netsight.graph.model.kinds import Kind, make_key
from netsight.graph.model.records import (
    DEFAULT_DNS,
    PodRecord,
    ServiceRecord,
)
from netsight.graph.store.live import GraphView

# A label as RFC 1123 allows it, or an SRV label (_http, _tcp).
_LABEL = re.compile(r"_?[a-z0-9]([-a-z0-9]*[a-z0-9])?")
CLUSTER_NDOTS = 5  # what the kubelet writes for ClusterFirst pods
RESOLVER_NDOTS = 1  # glibc's default, without an ndots option
MAX_NDOTS = 15  # glibc caps ndots here
MAX_NAMESERVERS = 3  # the resolver reads no more (the kubelet keeps the first three)


@dataclass
class Resolver:
    """The pod's resolv.conf, as far as netsight knows it."""

    policy: str
    cluster_dns: bool  # queries go to cluster DNS (else to the node's resolvers)
    nameservers: list[str]
    searches: list[str]  # the known search domains, in order
    ndots: int
    node_searches: bool = False  # the node's search domains (not known) are in the path
    node_at: int = 0  # where in ``searches`` they come
    namespace_unknown: bool = False  # no pod: its <ns>.svc.<domain> domain is not known
    notes: list[str] = field(default_factory=list)


@dataclass
class Query:
    name: str  # fully qualified, as sent
    outcome: str  # answer, nxdomain, nodata, refused, servfail, forwarded, undecided
    records: tuple[str, ...] = ()
    by: str = ""  # what answers it
    note: str | None = None


@dataclass
class Resolution:
    name: str
    form: str
    resolver: Resolver
    queries: list[Query]
    outcome: str  # resolves, nxdomain, forwarded, undecided, invalid
    answered_by: str | None
    records: tuple[str, ...]
    intent: str | None  # the cluster name the name stands for, if any
    findings: list[Finding] = field(default_factory=list)
    not_evaluated: list[str] = field(default_factory=list)


def name_problem(text: str) -> str | None:
    """Why ``text`` is not a DNS name a resolver sends, or None."""
    name = text[:-1] if text.endswith(".") else text
    if not name:
        return "it is empty"
    if len(name) > 253:
        return f"it is {len(name)} characters long (at most 253)"
    for label in name.lower().split("."):
        if not label:
            return "it has an empty label ('..', or a leading dot)"
        if len(label) > 63:
            return f"label {label[:20]}... is {len(label)} characters long (at most 63)"
        if not _LABEL.fullmatch(label):
            return (f"label {label!r} holds characters other than letters, digits and '-', "
                    "or starts or ends with '-'")
    return None


def resolver_of(view: GraphView, pod: PodRecord | None, dns: ClusterDNS) -> Resolver:
    settings = DEFAULT_DNS if pod is None or pod.dns is None else pod.dns
    policy = settings.policy
    host = pod is not None and pod.host_network
    server = cluster_dns_address(view)
    domain = dns.domain
    if policy == "None":
        resolver = Resolver(policy, False, [], [], RESOLVER_NDOTS)
    elif policy == "ClusterFirstWithHostNet" or (policy == "ClusterFirst" and not host):
        namespace = pod.namespace if pod is not None else None
        searches = [f"svc.{domain}", domain]
        if namespace is not None:
            searches.insert(0, f"{namespace}.svc.{domain}")
        resolver = Resolver(policy, True, [server], searches, CLUSTER_NDOTS,
                            node_searches=True, namespace_unknown=namespace is None)
    else:  # Default, or ClusterFirst on the host network: the node's resolv.conf
        resolver = Resolver(policy, False, ["the node's resolvers"], [], RESOLVER_NDOTS,
                            node_searches=True)
        resolver.notes.append("resolver: the pod uses its node's resolv.conf, whose "
                              "nameservers, search domains and options netsight does not "
                              f"know (ndots {RESOLVER_NDOTS}, the resolver's default, "
                              "assumed)")
    for server in settings.nameservers:
        if server not in resolver.nameservers:
            resolver.nameservers.append(server)
    # The node's search domains come after the cluster's, before dnsConfig's.
    resolver.node_at = len(resolver.searches)
    for search in settings.searches:
        if search.rstrip(".") not in resolver.searches:
            resolver.searches.append(search.rstrip("."))
    for name, value in settings.options:
        if name == "ndots" and value is not None and value.isdigit():
            resolver.ndots = min(int(value), MAX_NDOTS)
    if policy == "None" and settings.nameservers:
        # dnsConfig's nameservers: cluster DNS only if they name its address.
        resolver.cluster_dns = settings.nameservers[0] == server
        if not resolver.cluster_dns:
            resolver.notes.append(f"resolver: queries go to {settings.nameservers[0]} "
                                  "(dnsConfig.nameservers), which netsight does not model")
    del resolver.nameservers[MAX_NAMESERVERS:]
    if resolver.namespace_unknown:
        resolver.notes.append("search path: no pod given ('from'), so the first search "
                              f"domain (<namespace>.svc.{domain}) is not known; short "
                              "Service names depend on it")
    if resolver.node_searches and resolver.cluster_dns:
        resolver.notes.append("search path: the node's search domains, which follow the "
                              "cluster's, are not known to netsight")
    return resolver


def cluster_dns_address(view: GraphView) -> str:
    """The cluster DNS Service's ClusterIP (kube-system/kube-dns, as kubeadm names it for
    CoreDNS too), which the kubelet's clusterDNS normally names."""
    service = view.get(make_key(Kind.SERVICE, "kube-system", "kube-dns"))
    if isinstance(service, ServiceRecord) and service.cluster_ips \
            and service.cluster_ips[0] != "None":
        return service.cluster_ips[0]
    return "cluster DNS"


def queries_for(name: str, resolver: Resolver) -> list[str]:
    """The names the resolver sends, in order (each as A and AAAA)."""
    if name.endswith("."):
        return [name.lower()]
    as_is = fqdn(name)
    searched = [fqdn(f"{name}.{domain}") for domain in resolver.searches]
    if name.count(".") >= resolver.ndots:
        return [as_is, *(q for q in searched if q != as_is)]
    return [*searched, as_is] if as_is not in searched else searched


def resolve(view: GraphView, dns: ClusterDNS, name: str, pod: PodRecord | None
            ) -> Resolution:
    resolver = resolver_of(view, pod, dns)
    problem = name_problem(name)
    if problem is not None:
        finding = codes.DNS_NAME_INVALID.finding(
            None, f"{name[:80]!r} is not a valid DNS name: {problem}",
            detail="Resolvers refuse such a name, or no server holds it: RFC 1123 allows "
            "letters, digits and '-' in labels of 1-63 characters, 253 in all.",
            suggestion="Use the Service's name as Kubernetes writes it: "
            "<service>.<namespace>.svc." + dns.domain)
        return Resolution(name, "invalid", resolver, [], "invalid", None, (), None,
                          [finding])
    engine = _Engine(view, dns, resolver, pod)
    return engine.run(name)


class _Engine:
    def __init__(self, view: GraphView, dns: ClusterDNS, resolver: Resolver,
                 pod: PodRecord | None) -> None:
        self.view, self.dns, self.resolver, self.pod = view, dns, resolver, pod
        self.findings: list[Finding] = []
        self.not_evaluated: list[str] = list(dns.not_evaluated) + list(resolver.notes)
        self.zone = fqdn(dns.domain)
        self.records = KubernetesRecords(view, dns.domain)

    # --- the resolver's walk --------------------------------------------------------------

    def run(self, name: str) -> Resolution:
        resolver = self.resolver
        intent = self.intent(name)
        # The first answer ends the search: later names are never sent.
        queries: list[Query] = []
        for sent in queries_for(name, resolver):
            queries.append(self.query(sent))
            if queries[-1].outcome == "answer":
                break
        outcome, answered = "nxdomain", None
        records: tuple[str, ...] = ()
        for query in queries:
            if query.outcome == "answer":
                answered, records, outcome = query.name, query.records, "resolves"
                break
            if query.outcome in ("forwarded", "undecided"):
                outcome = query.outcome
                break
        form = self.form(intent) if intent is not None else "external"
        resolution = Resolution(name, form, resolver, queries, outcome, answered, records,
                                intent)
        self.pitfalls(name, resolution)
        resolution.findings = self.findings + self.dns.findings
        resolution.not_evaluated = list(dict.fromkeys(self.not_evaluated))
        return resolution

    def query(self, name: str) -> Query:
        if not self.resolver.cluster_dns:
            return Query(name, "undecided", by=self.resolver.nameservers[0]
                         if self.resolver.nameservers else "no nameserver",
                         note="not cluster DNS: what it answers is not known")
        if not self.dns.read:
            if in_zone(name, self.zone):
                return self.cluster(name, None, "cluster DNS (kubernetes plugin assumed)")
            return Query(name, "forwarded", by="cluster DNS, forwarding upstream (Corefile "
                         "not read)")
        return self.routed(name, self.dns.route(name))

    def routed(self, name: str, step: Step) -> Query:
        note = "; ".join(step.rewrites) or None
        if step.refused:
            return Query(name, "refused", by="cluster DNS: no server block serves it")
        if step.undecided is not None:
            self.not_evaluated.append(step.undecided)
            return Query(name, "undecided", by=f"{step.plugin} in {step.block}", note=note)
        if step.kubernetes is not None:
            query = self.cluster(step.name, step.kubernetes,
                                 f"kubernetes plugin (line {step.kubernetes.line})")
            if query.outcome in ("nxdomain", "nodata") and \
                    step.kubernetes.falls_through(step.name):
                after = self.dns.route(step.name, past_kubernetes=True)
                following = self.routed(name, after)
                following.note = "; ".join(x for x in (note, "kubernetes falls through",
                                                        following.note) if x)
                return following
            query.name = name
            query.note = "; ".join(x for x in (note, query.note) if x) or None
            return query
        if step.forward is not None:
            return Query(name, "forwarded", by=step.forward.describe(), note=note)
        if step.plugin == "hosts":
            return Query(name, "answer", step.answer, by=f"hosts in {step.block}", note=note)
        return Query(name, "servfail", by=f"no plugin of block {step.block} answers it",
                     note=note)

    # --- the kubernetes plugin -----------------------------------------------------------

    def cluster(self, name: str, plugin: Kubernetes | None, by: str) -> Query:
        answer = self.records.answer(name, plugin)
        if answer.rcode == "undecided":
            self.not_evaluated.append(f"{name}: {answer.why}")
            return Query(name, "undecided", by=by, note=answer.why)
        return Query(name, answer.rcode, answer.records, by=by, note=answer.why or None)

    # --- what the name stands for ----------------------------------------------------------

    def intent(self, name: str) -> str | None:
        """The cluster name ``name`` stands for (fully qualified), or None for a name
        outside the cluster."""
        text = name.lower().rstrip(".")
        zone = self.dns.domain
        if text == zone or text.endswith(f".{zone}"):
            return f"{text}."
        if name.endswith("."):
            return None
        labels = text.split(".")
        if labels[-1] in ("svc", "pod"):
            return f"{text}.{zone}."
        namespace = self.pod.namespace if self.pod is not None else None
        if len(labels) == 1:
            return f"{text}.{namespace}.svc.{zone}." if namespace else None
        known = self.view.namespaces()
        if labels[-1] in known:
            return f"{text}.svc.{zone}."
        return None

    def form(self, intent: str) -> str:
        answer = self.records.answer(intent, self._plugin(intent))
        labels = intent[:-len(self.zone)].rstrip(".").split(".")
        if labels[-1:] == ["pod"]:
            return "pod"
        if labels[-1:] != ["svc"] or len(labels) < 3:
            return "cluster"
        if len(labels) == 5 and labels[0].startswith("_"):
            return "srv"
        service = self.view.get(make_key(Kind.SERVICE, labels[-2], labels[-3]))
        if len(labels) == 4:
            return "headless-pod"
        if not isinstance(service, ServiceRecord):
            return "service" if answer.rcode != "answer" else "cluster"
        if service.type == "ExternalName":
            return "external-name"
        return "headless-service" if service.headless else "service"

    def _plugin(self, name: str) -> Kubernetes | None:
        if not self.dns.read:
            return None
        return self.dns.route(name).kubernetes

    # --- findings --------------------------------------------------------------------------

    def pitfalls(self, name: str, resolution: Resolution) -> None:
        resolver, intent, pod = self.resolver, resolution.intent, self.pod
        # Where the Corefile sends the name elsewhere than the kubernetes plugin, the
        # route (and its own findings) say why; the graph's records do not matter.
        if intent is not None and (not self.dns.read or self._plugin(intent) is not None):
            self.cluster_pitfalls(name, intent, resolution)
        if pod is not None and intent is not None and not resolver.cluster_dns:
            if resolver.policy == "Default":
                self.findings.append(codes.DNS_POLICY_DEFAULT.finding(
                    ref(pod), f"pod {pod.ref} has dnsPolicy Default: {name} is asked of its "
                    "node's resolvers, not cluster DNS",
                    detail="dnsPolicy Default gives the pod its node's resolv.conf; cluster "
                    "names resolve there only if the node forwards them to cluster DNS.",
                    suggestion="Use dnsPolicy ClusterFirst (the default).",
                    evidence=[evidence(pod, "spec.dnsPolicy", "Default")]))
            elif resolver.policy == "ClusterFirst" and pod.host_network:
                self.findings.append(codes.DNS_HOST_NETWORK_WITHOUT_CLUSTER_FIRST.finding(
                    ref(pod), f"host-network pod {pod.ref} asks its node's resolvers for "
                    f"{name}: dnsPolicy ClusterFirst does not apply on the host network",
                    detail="The kubelet gives a hostNetwork pod with dnsPolicy ClusterFirst "
                    "its node's resolv.conf; only ClusterFirstWithHostNet gives it cluster "
                    "DNS.",
                    suggestion="Set dnsPolicy: ClusterFirstWithHostNet.",
                    evidence=[evidence(pod, "spec.dnsPolicy", "ClusterFirst")]))
        self.search_walk(name, resolution)
        answering = next((q for q in resolution.queries if q.name == resolution.answered_by),
                         resolution.queries[-1] if resolution.queries else None)
        if answering is not None and answering.note and "->" in answering.note:
            self.findings.append(codes.DNS_NAME_REWRITTEN.finding(
                _config_ref(self.dns), f"{answering.name} is rewritten: {answering.note}",
                detail="CoreDNS's rewrite plugin changes the name before the plugins that "
                "answer see it. Some resolvers refuse an answer whose records carry another "
                "name than the question's: a rule with `answer auto` (or `answer name`) "
                "writes the name asked for back into them.",
                evidence=_config_evidence(self.dns, answering.note)))

    def cluster_pitfalls(self, name: str, intent: str, resolution: Resolution) -> None:
        plugin = self._plugin(intent)
        answer = self.records.answer(intent, plugin)
        labels = intent[:-len(self.zone)].rstrip(".").split(".")
        if labels[-1:] == ["pod"] and plugin is not None and undashed(labels[0]) is not None:
            if plugin.pods == "insecure":
                self.findings.append(codes.DNS_POD_RECORDS_INSECURE.finding(
                    _config_ref(self.dns), f"{intent} is answered with pods insecure: "
                    "whether a pod has that address is not checked",
                    detail="With pods insecure, the kubernetes plugin answers every "
                    "address-shaped name under <namespace>.pod; a pod's name proves nothing.",
                    suggestion="Use pods verified, or a headless Service's per-pod names.",
                    evidence=_config_evidence(self.dns, "pods insecure")))
            elif plugin.pods not in ("insecure", "verified"):
                self.findings.append(codes.DNS_POD_RECORDS_DISABLED.finding(
                    _config_ref(self.dns), f"{intent} is a pod name, and the kubernetes "
                    f"plugin's pods mode is {plugin.pods}: NXDOMAIN",
                    detail="Pod A records (1-2-3-4.<namespace>.pod.<domain>) are answered "
                    "only with pods insecure or pods verified; the default is disabled.",
                    suggestion="Add `pods verified` to the kubernetes plugin, or reach the "
                    "pod through a headless Service (hostname and subdomain).",
                    evidence=_config_evidence(self.dns, f"pods {plugin.pods}")))
            return
        if answer.rcode == "answer" and answer.cname is not None:
            if _is_ip(answer.cname):
                service = self.view.get(make_key(Kind.SERVICE, labels[-2], labels[-3]))
                if isinstance(service, ServiceRecord):
                    self.findings.append(codes.EXTERNAL_NAME_IS_IP.finding(
                        ref(service), f"{intent} is a CNAME to {answer.cname}, an IP address "
                        "written as a name, which does not resolve",
                        detail="Cluster DNS answers an ExternalName Service with a CNAME to "
                        "spec.externalName; an IP address there becomes a name made of "
                        "digits that no server holds.",
                        suggestion="Use a Service without selector and an EndpointSlice "
                        "holding the address, or point externalName at a DNS name.",
                        evidence=[evidence(service, "spec.externalName", answer.cname)]))
            return
        if answer.rcode != "nxdomain":
            return
        why = answer.why
        if why.startswith("namespace") and "namespaces" in why:
            self.findings.append(codes.DNS_NAMESPACE_NOT_SERVED.finding(
                _config_ref(self.dns), f"{intent}: {why}",
                detail="The kubernetes plugin answers only for the namespaces its "
                "namespaces option lists; every other namespace's names are NXDOMAIN.",
                suggestion=f"Add {labels[-2]} to the namespaces option, or remove the option.",
                evidence=_config_evidence(self.dns, "namespaces")))
            return
        if why.startswith("headless Service"):
            service = self.view.get(make_key(Kind.SERVICE, labels[-2], labels[-3]))
            if isinstance(service, ServiceRecord):
                self.findings.append(codes.DNS_HEADLESS_NO_READY_ENDPOINTS.finding(
                    ref(service), f"{intent} resolves to no address: {why}",
                    detail="A headless Service has no ClusterIP: its name answers with the "
                    "addresses of its ready endpoints, so with none it answers nothing and "
                    "clients fail to resolve it.",
                    suggestion=f"Check why the pods of {service.ref} are not ready, or set "
                    "publishNotReadyAddresses for peers that must find each other first.",
                    evidence=[evidence(service, "spec.selector",
                                       dict(service.selector) if service.selector else None)]))
            return
        if why.startswith("the kubernetes plugin's pods"):
            return
        short = labels[-3] if len(labels) >= 3 and labels[-1] == "svc" else None
        elsewhere = sorted(s.namespace for s in self.view.for_each(Kind.SERVICE)
                           if s.name == short) if short and name.count(".") == 0 else []
        if elsewhere and self.pod is not None:
            self.findings.append(codes.DNS_SHORT_NAME_IN_OTHER_NAMESPACE.finding(
                ref(self.pod), f"{name} from {self.pod.ref} looks for Service "
                f"{self.pod.namespace}/{short}, which does not exist; Service {short} is in "
                f"{', '.join(elsewhere[:3])}",
                detail="A short name is completed with the pod's own namespace first "
                f"({self.pod.namespace}.svc.{self.dns.domain}); a Service of another "
                "namespace needs its namespace in the name.",
                suggestion=f"Use {short}.{elsewhere[0]} (or {short}.{elsewhere[0]}.svc."
                f"{self.dns.domain}).",
                evidence=[evidence(self.pod, "metadata.namespace", self.pod.namespace)]))
            return
        self.findings.append(codes.DNS_CLUSTER_NAME_NOT_FOUND.finding(
            None, f"{intent} does not exist: {why}",
            detail="Cluster DNS answers NXDOMAIN for a name under the cluster domain that "
            "names no Service, namespace, port or pod; the resolver then tries the rest of "
            "its search path and gives up.",
            suggestion="Check the Service's name and namespace (kubectl get svc -A)."))

    def search_walk(self, name: str, resolution: Resolution) -> None:
        """NS0802: a name outside the cluster sent under every search domain first."""
        resolver, queries = self.resolver, resolution.queries
        if name.endswith(".") or resolution.intent is not None or len(queries) < 2:
            return
        as_is = fqdn(name)
        if queries[-1].name != as_is or queries[0].name == as_is:
            return
        extra = len(queries) - 1
        more = " at least" if resolver.node_searches else ""
        dots = name.count(".")
        self.findings.append(codes.DNS_SEARCH_PATH_WALK.finding(
            None, f"{name} has {dots} dot(s), fewer than ndots {resolver.ndots}: the "
            f"resolver sends{more} {extra} search-path queries (x2 for A and AAAA) before "
            f"{as_is}",
            detail="A name with fewer dots than ndots is tried under each search domain "
            "before as written; each try is a round trip to cluster DNS that answers "
            "NXDOMAIN, which slows every lookup and multiplies cluster DNS load.",
            suggestion=f"Write the name with a final dot ({as_is}), or lower ndots in the "
            f"pod's dnsConfig.options (ndots: {max(dots, 1)})."))


def _config_ref(dns: ClusterDNS) -> ResourceRef | None:
    return ref(dns.config_map) if dns.config_map is not None else None


def _config_evidence(dns: ClusterDNS, value: str) -> list[Evidence]:
    if dns.config_map is None:
        return []
    return [evidence(dns.config_map, "data.Corefile", value)]


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text.rstrip("."))
    except ValueError:
        return False
    return True
