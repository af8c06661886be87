"""Cluster DNS as its ConfigMap configures it: which server block of the Corefile takes a
name, the rewrites it goes through, and the plugin that answers it (``kubernetes``,
``forward``, ``hosts``), with the configuration's pitfalls as findings.

CoreDNS serves a query from the server block whose zone is the longest suffix of the name
(on the port pods query, 53), then runs that block's plugins in the order CoreDNS was
built with (plugin.cfg), not the order the Corefile lists them: ``rewrite`` before
``template`` and ``hosts``, before ``kubernetes``, before ``forward``. A plugin netsight
does not evaluate that may answer the name makes the answer undecided, and says why.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterator
from dataclasses import dataclass, field

from netsight.analyzers.core import codes, regex
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.services.corefile import (
    Corefile,
    CorefileError,
    Directive,
    ServerBlock,
    fqdn,
    parse,
)
from netsight.graph.model.kinds import make_key
from netsight.graph.model.records import DNS_CONFIG_MAPS, ConfigMapRecord
from netsight.graph.store.live import GraphView, Source

CONFIG_MAP_KIND = "ConfigMap"
DEFAULT_DOMAIN = "cluster.local"
DNS_PORT = 53
# The kubernetes plugin's defaults (plugin/kubernetes/setup.go).
DEFAULT_TTL = 5
MAX_TTL = 3600
# A kubernetes ttl above this serves moved pods' and recreated Services' addresses stale.
LONG_TTL = 300
# CoreDNS's plugin order (plugin.cfg), which is the order a block runs its plugins in.
PLUGIN_ORDER = (
    "root", "metadata", "geoip", "cancel", "tls", "quic", "timeouts", "multisocket", "reload",
    "nsid", "bufsize", "bind", "debug", "trace", "ready", "health", "pprof", "prometheus",
    "errors", "log", "dnstap", "local", "dns64", "acl", "any", "chaos", "loadbalance", "tsig",
    "cache", "rewrite", "header", "dnssec", "autopath", "minimal", "template", "transfer",
    "hosts", "route53", "azure", "clouddns", "k8s_external", "kubernetes", "file", "auto",
    "secondary", "etcd", "loop", "forward", "grpc", "erratic", "whoami", "on", "sign", "view",
    "nomad",
)
_RANK = {name: i for i, name in enumerate(PLUGIN_ORDER)}
# Plugins that never answer an ordinary (class IN, A/AAAA/SRV/CNAME) query themselves.
PASSIVE = frozenset({
    "root", "metadata", "geoip", "cancel", "tls", "quic", "timeouts", "multisocket", "reload",
    "nsid", "bufsize", "bind", "debug", "trace", "ready", "health", "pprof", "prometheus",
    "errors", "log", "dnstap", "chaos", "loadbalance", "tsig", "cache", "header", "dnssec",
    "minimal", "transfer", "loop", "on", "any", "local", "dns64",
})
# Evaluated below; any other plugin that may answer makes the answer undecided.
EVALUATED = frozenset({"rewrite", "template", "hosts", "kubernetes", "forward"})
REVERSE_ZONES = ("in-addr.arpa.", "ip6.arpa.")


@dataclass(frozen=True, slots=True)
class Kubernetes:
    """The ``kubernetes`` plugin of a block, with the options that decide its answers."""

    zones: tuple[str, ...]
    line: int
    pods: str = "disabled"  # disabled (the default), insecure or verified
    fallthrough: tuple[str, ...] | None = None  # None: never; (): every zone
    namespaces: frozenset[str] | None = None  # None: every namespace
    ttl: int = DEFAULT_TTL
    endpoint_pod_names: bool = False
    ignore_empty_service: bool = False

    def falls_through(self, name: str) -> bool:
        return self.fallthrough is not None and (
            not self.fallthrough or any(in_zone(name, z) for z in self.fallthrough))


@dataclass(frozen=True, slots=True)
class Forward:
    zone: str
    upstreams: tuple[str, ...]
    line: int
    policy: str = "random"
    excepted: tuple[str, ...] = ()

    def describe(self) -> str:
        policy = "" if self.policy == "random" else f" ({self.policy})"
        return f"forward {self.zone} to {', '.join(self.upstreams)}{policy}"


@dataclass(frozen=True, slots=True)
class Step:
    """Where a name stands in the block that takes it."""

    name: str  # the name the answering plugin sees (after rewrites)
    plugin: str  # "kubernetes", "forward", "hosts", "none", or the undecided plugin
    block: str  # the block's keys, with its line
    kubernetes: Kubernetes | None = None
    forward: Forward | None = None
    answer: tuple[str, ...] = ()  # hosts entries
    rewrites: tuple[str, ...] = ()  # "a. -> b. (rewrite at line 7)"
    undecided: str | None = None  # why netsight cannot tell what answers
    refused: bool = False  # no block serves the name


# The kubernetes plugin's verdict on one name: the answer's records, "nxdomain" or
# "nodata" with no records, or None when netsight cannot tell (said in ``why``).
@dataclass(frozen=True, slots=True)
class ClusterAnswer:
    records: tuple[str, ...] = ()
    rcode: str = "answer"  # "answer", "nxdomain", "nodata", "undecided"
    why: str = ""
    cname: str | None = None  # an ExternalName Service's target


@dataclass
class ClusterDNS:
    """The cluster DNS configuration as read from the graph."""

    source: str  # "ConfigMap/kube-system/coredns", a kube-dns ConfigMap, or "none"
    domain: str  # without its final dot
    domain_assumed: bool
    config_map: ConfigMapRecord | None = None
    corefile: Corefile | None = None
    blocks: list[ServerBlock] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    not_evaluated: list[str] = field(default_factory=list)

    @property
    def read(self) -> bool:
        """Whether a configuration was read and parsed (else every route is undecided)."""
        return self.corefile is not None

    def route(self, name: str, *, past_kubernetes: bool = False) -> Step:
        """What takes ``name`` (fully qualified, lower case) in this configuration;
        ``past_kubernetes``: what the kubernetes plugin falls through to."""
        assert self.corefile is not None
        block = select_block(self.blocks, name)
        if block is None:
            return Step(name, "none", "", refused=True)
        where = f"{' '.join(k.text for k in block.keys)} (line {block.line})"
        rewritten, rewrites, why = apply_rewrites(block, name)
        if why is not None:
            return Step(name, "rewrite", where, rewrites=rewrites, undecided=why)
        for directive in _ordered(block):
            plugin = directive.name
            if past_kubernetes:
                past_kubernetes = plugin != "kubernetes"
                continue
            if directive.placeholders:
                return Step(rewritten, plugin, where, rewrites=rewrites, undecided=(
                    f"{plugin} at line {directive.line} holds {directive.placeholders[0]}, "
                    "whose value (CoreDNS's environment) is unknown"))
            if plugin == "kubernetes":
                plugin_ = kubernetes_of(directive, block)
                if any(in_zone(rewritten, z) for z in plugin_.zones):
                    return Step(rewritten, plugin, where, kubernetes=plugin_, rewrites=rewrites)
            elif plugin == "forward":
                forward = forward_of(directive)
                if forward is not None and in_zone(rewritten, forward.zone) and not any(
                        in_zone(rewritten, e) for e in forward.excepted):
                    return Step(rewritten, plugin, where, forward=forward, rewrites=rewrites)
            elif plugin == "hosts":
                step = _hosts(directive, block, rewritten, where, rewrites)
                if step is not None:
                    return step
            elif plugin == "template":
                zones = _zones(directive.args[2:], block)
                if any(in_zone(rewritten, z) for z in zones):
                    return Step(rewritten, plugin, where, rewrites=rewrites, undecided=(
                        f"template at line {directive.line} may answer {rewritten} (its "
                        "regular expressions and answers are not evaluated)"))
            elif plugin in ("acl", "autopath"):
                return Step(rewritten, plugin, where, rewrites=rewrites, undecided=(
                    f"{plugin} at line {directive.line} is not evaluated"))
            elif plugin not in PASSIVE and plugin != "rewrite":
                return Step(rewritten, plugin, where, rewrites=rewrites, undecided=(
                    f"{plugin} at line {directive.line} may answer {rewritten}; netsight "
                    "does not evaluate that plugin"))
        return Step(rewritten, "none", where, rewrites=rewrites)


def in_zone(name: str, zone: str) -> bool:
    return zone == "." or name == zone or name.endswith(f".{zone}")


def select_block(blocks: list[ServerBlock], name: str) -> ServerBlock | None:
    """The block whose zone is the longest suffix of ``name``, among the plain-DNS blocks
    on port 53 (pods query cluster DNS there)."""
    best: tuple[int, ServerBlock] | None = None
    for block in blocks:
        for key in block.keys:
            if key.scheme != "dns" or key.port not in (None, DNS_PORT):
                continue
            if in_zone(name, key.zone):
                length = 0 if key.zone == "." else len(key.zone)
                if best is None or length > best[0]:
                    best = (length, block)
    return None if best is None else best[1]


def _ordered(block: ServerBlock) -> list[Directive]:
    # Unknown (external) plugins have no known place: after the known ones that answer.
    return sorted(block.directives, key=lambda d: _RANK.get(d.name, _RANK["forward"]))


def _zones(args: tuple[str, ...], block: ServerBlock) -> tuple[str, ...]:
    return tuple(fqdn(a) for a in args) if args else tuple(k.zone for k in block.keys)


def kubernetes_of(directive: Directive, block: ServerBlock) -> Kubernetes:
    pods, fallthrough, namespaces, ttl = "disabled", None, None, DEFAULT_TTL
    pod_names = ignore_empty = False
    for option in directive.block or ():
        if option.name == "pods" and option.args:
            pods = option.args[0]
        elif option.name == "fallthrough":
            fallthrough = tuple(fqdn(a) for a in option.args)
        elif option.name == "namespaces":
            namespaces = frozenset(option.args)
        elif option.name == "ttl" and option.args and option.args[0].isdigit():
            ttl = int(option.args[0])
        elif option.name == "endpoint_pod_names":
            pod_names = True
        elif option.name == "ignore" and "empty_service" in option.args:
            ignore_empty = True
    return Kubernetes(_zones(directive.args, block), directive.line, pods, fallthrough,
                      namespaces, ttl, pod_names, ignore_empty)


def forward_of(directive: Directive) -> Forward | None:
    if len(directive.args) < 2:
        return None
    policy = "random"
    excepted: tuple[str, ...] = ()
    for option in directive.block or ():
        if option.name == "policy" and option.args:
            policy = option.args[0]
        elif option.name == "except":
            excepted = tuple(fqdn(a) for a in option.args)
    return Forward(fqdn(directive.args[0]), directive.args[1:], directive.line, policy,
                   excepted)


def _hosts(directive: Directive, block: ServerBlock, name: str, where: str,
           rewrites: tuple[str, ...]) -> Step | None:
    # hosts [FILE [ZONES...]] { inline entries: ADDRESS NAME..., fallthrough, ... }
    zones = _zones(directive.args[1:], block)
    if not any(in_zone(name, z) for z in zones):
        return None
    found = []
    fallthrough: tuple[str, ...] | None = None
    for line in directive.block or ():
        if line.name == "fallthrough":
            fallthrough = tuple(fqdn(a) for a in line.args)
        elif _is_ip(line.name) and name in (fqdn(n) for n in line.args):
            found.append(line.name)
    if found:
        return Step(name, "hosts", where, answer=tuple(found), rewrites=rewrites)
    file = directive.args[0] if directive.args else "/etc/hosts"
    if fallthrough is not None and (not fallthrough or any(in_zone(name, z)
                                                           for z in fallthrough)):
        return None  # the file may still hold it; if not, the next plugin answers
    return Step(name, "hosts", where, rewrites=rewrites, undecided=(
        f"hosts at line {directive.line}: {name} is in no inline entry; whether {file} "
        "in CoreDNS's container holds it is not known"))


def apply_rewrites(block: ServerBlock, name: str
                   ) -> tuple[str, tuple[str, ...], str | None]:
    """``name`` after the block's ``rewrite name`` rules, the rules that changed it, and
    why it cannot be told (a rule netsight does not read)."""
    applied: list[str] = []
    for directive in block.plugins("rewrite"):
        args = list(directive.args)
        mode = "stop"
        if args and args[0] in ("continue", "stop"):
            mode = args.pop(0)
        if not args or args[0] != "name":
            continue  # type, class, edns0, ttl, cname, rcode: the name stays
        args.pop(0)
        kind = "exact"
        if args and args[0] in ("exact", "prefix", "suffix", "substring", "regex"):
            kind = args.pop(0)
        if len(args) < 2:
            return name, tuple(applied), (f"rewrite at line {directive.line} lacks FROM TO")
        source, target = args[0], args[1]
        rewritten = _rewrite(kind, source, target, name)
        if isinstance(rewritten, _Refused):
            return name, tuple(applied), (f"rewrite at line {directive.line}: "
                                          f"{rewritten.reason}")
        if rewritten is not None and rewritten != name:
            applied.append(f"{name} -> {rewritten} (rewrite {kind} at line {directive.line})")
            name = rewritten
            if mode == "stop":
                break
    return name, tuple(applied), None


@dataclass(frozen=True, slots=True)
class _Refused:
    reason: str


def _rewrite(kind: str, source: str, target: str, name: str) -> str | _Refused | None:
    """CoreDNS's name rule (plugin/rewrite/name.go) applied to ``name``; None: no match."""
    if kind == "exact":
        return fqdn(target) if name == fqdn(source) else None
    if kind == "prefix":
        prefix = source.lower()
        return fqdn(target.lower() + name[len(prefix):]) if name.startswith(prefix) else None
    if kind == "suffix":
        suffix = fqdn(source)
        return fqdn(name[:-len(suffix)] + fqdn(target)) if name.endswith(suffix) else None
    if kind == "substring":
        return fqdn(name.replace(source.lower(), target.lower(), 1)) \
            if source.lower() in name else None
    found = regex.submatches(source, name)
    if isinstance(found, str):
        return _Refused(f"regex {source!r} is not valid RE2 ({found})")
    if found is None:
        return None
    replaced = target
    for index, group in enumerate(found):
        replaced = replaced.replace(f"{{{index}}}", group)
    return fqdn(replaced)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _upstream_problem(upstream: str) -> str | None:
    """Why CoreDNS refuses a forward destination (plugin/pkg/parse.HostPortOrFile)."""
    text = upstream
    for scheme in ("dns://", "tls://", "https://", "grpc://"):
        if text.startswith(scheme):
            text = text[len(scheme):]
            break
    if text.startswith("/"):
        return None  # a resolv.conf-style file in CoreDNS's container
    host = text
    if text.startswith("["):
        host = text[1:].partition("]")[0]
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
        if not port.isdigit():
            return f"{upstream} has no valid port"
    if _is_ip(host):
        return None
    return f"{upstream} is not an IP address or a file"


# --- reading the configuration --------------------------------------------------------------


def read(view: GraphView) -> ClusterDNS:
    """The cluster DNS configuration the graph holds (a Corefile parses in well under a
    millisecond: read afresh for each call rather than cached)."""
    coredns, kube_dns = (view.get(make_key(CONFIG_MAP_KIND, ns, name))
                         for ns, name in DNS_CONFIG_MAPS)
    unknown = "cluster DNS ConfigMap not read"
    if isinstance(coredns, ConfigMapRecord) and coredns.dns_data is not None \
            and "Corefile" in coredns.dns_data:
        dns = _from_corefile(coredns, coredns.dns_data["Corefile"])
        if isinstance(kube_dns, ConfigMapRecord) and kube_dns.dns_data:
            dns.not_evaluated.append(
                "ConfigMap kube-system/kube-dns: CoreDNS reads only its Corefile; the "
                "kube-dns ConfigMap's stubDomains and upstreamNameservers are not used")
        return dns
    if isinstance(kube_dns, ConfigMapRecord) and kube_dns.dns_data:
        return _from_kube_dns(kube_dns)
    dns = ClusterDNS("none", DEFAULT_DOMAIN, True)
    namespace, name = DNS_CONFIG_MAPS[0]
    untracked = view.untracked(f"{CONFIG_MAP_KIND}/{namespace}/{name}")
    if untracked is not None:
        dns.not_evaluated.append(f"{unknown}: {untracked} (its data is read with "
                                 "DNS_CONFIG=true)")
    elif isinstance(coredns, ConfigMapRecord):
        dns.not_evaluated.append(f"{unknown}: the coredns ConfigMap of kube-system has no "
                                 "Corefile")
    else:
        dns.not_evaluated.append(
            f"{unknown}: no coredns (or kube-dns) ConfigMap of kube-system is in the "
            f"{'input' if view.source is Source.MANIFESTS else 'graph'} (or visible to "
            "the caller)")
    return dns


def _from_corefile(record: ConfigMapRecord, text: str,
                   source: str | None = None) -> ClusterDNS:
    try:
        corefile = parse(text)
    except CorefileError as exc:
        dns = ClusterDNS(source or f"ConfigMap/{record.ref}", DEFAULT_DOMAIN, True, record)
        dns.not_evaluated.append(f"Corefile: {exc}; the configuration is not evaluated")
        dns.findings.append(codes.COREFILE_UNPARSEABLE.finding(
            ref(record), f"Corefile of {record.ref} does not parse: {exc}",
            detail="CoreDNS refuses a Corefile that does not parse: it keeps serving the "
            "previous one (reload) or does not start. netsight evaluates none of it.",
            suggestion="Fix the Corefile's syntax; `coredns -conf Corefile -plugins` checks it.",
            evidence=[evidence(record, "data.Corefile", f"line {exc.line}")]))
        return dns
    dns = ClusterDNS(source or f"ConfigMap/{record.ref}", DEFAULT_DOMAIN, True, record,
                     corefile, list(corefile.blocks))
    dns.not_evaluated.extend(f"Corefile {item}" for item in corefile.not_evaluated)
    domain = _cluster_domain(dns.blocks)
    if domain is None:
        dns.findings.append(codes.COREFILE_NO_KUBERNETES.finding(
            ref(record), f"the Corefile of {record.ref} has no kubernetes plugin",
            detail="Without the kubernetes plugin, cluster DNS answers no Service or pod "
            "name: they go to the forwarders, which know none of them. The cluster domain "
            f"is assumed to be {DEFAULT_DOMAIN}.",
            suggestion="Add `kubernetes cluster.local in-addr.arpa ip6.arpa` to the . "
            "server block.",
            evidence=[evidence(record, "data.Corefile", None)]))
    else:
        dns.domain, dns.domain_assumed = domain.rstrip("."), False
    dns.findings.extend(_pitfalls(dns, record))
    return dns


def _from_kube_dns(record: ConfigMapRecord) -> ClusterDNS:
    """kube-dns's ConfigMap, read as kubeadm translates it into a Corefile."""
    data = record.dns_data or {}
    problems = []
    stubs: dict[str, list[str]] = {}
    upstreams: list[str] = []
    try:
        loaded = json.loads(data.get("stubDomains") or "{}")
        if isinstance(loaded, dict) and all(isinstance(v, list) for v in loaded.values()):
            stubs = {str(k): [str(s) for s in v] for k, v in loaded.items()}
        else:
            problems.append("stubDomains is not a JSON object of lists")
    except ValueError as exc:
        problems.append(f"stubDomains is not JSON ({exc})")
    try:
        loaded = json.loads(data.get("upstreamNameservers") or "[]")
        if isinstance(loaded, list):
            upstreams = [str(u) for u in loaded]
        else:
            problems.append("upstreamNameservers is not a JSON list")
    except ValueError as exc:
        problems.append(f"upstreamNameservers is not JSON ({exc})")
    lines = [".:53 {", f"    kubernetes {DEFAULT_DOMAIN} in-addr.arpa ip6.arpa {{",
             "        pods insecure", "        fallthrough in-addr.arpa ip6.arpa", "    }",
             f"    forward . {' '.join(upstreams) or '/etc/resolv.conf'}", "    cache 30",
             "}"]
    for domain, servers in stubs.items():
        lines += [f"{domain}:53 {{", f"    forward . {' '.join(servers)}", "}"]
    dns = _from_corefile(record, "\n".join(lines),
                         source=f"ConfigMap/{record.ref} (kube-dns stubDomains and "
                         "upstreamNameservers, read as kubeadm translates them)")
    dns.domain_assumed = True  # kube-dns takes its domain from a flag, not the ConfigMap
    dns.not_evaluated.extend(f"ConfigMap {record.ref}: {p}" for p in problems)
    return dns


def _cluster_domain(blocks: list[ServerBlock]) -> str | None:
    for block in blocks:
        for directive in block.plugins("kubernetes"):
            for zone in kubernetes_of(directive, block).zones:
                if zone != "." and not zone.endswith(REVERSE_ZONES):
                    return zone
    return None


def _pitfalls(dns: ClusterDNS, record: ConfigMapRecord) -> Iterator[Finding]:
    domain = fqdn(dns.domain)
    for block in dns.blocks:
        keys = " ".join(k.text for k in block.keys)
        for directive in block.plugins("forward"):
            for upstream in directive.args[1:]:
                problem = _upstream_problem(upstream)
                if problem is not None and not directive.placeholders:
                    yield codes.COREFILE_FORWARD_NOT_AN_ADDRESS.finding(
                        ref(record), f"forward in block {keys} (line {directive.line}): "
                        f"{problem}",
                        detail="CoreDNS's forward plugin takes IP addresses (with an "
                        "optional port and tls:// or dns://) or a resolv.conf file; a host "
                        "name makes CoreDNS refuse the whole Corefile.",
                        suggestion="Give the upstream's IP address.",
                        evidence=[evidence(record, "data.Corefile",
                                           f"line {directive.line}: forward "
                                           f"{' '.join(directive.args)}")])
        for directive in block.plugins("cache"):
            ttls = [a for a in directive.args[:1] if a.lstrip("-").isdigit()]
            for option in directive.block or ():
                if option.name in ("success", "denial") and len(option.args) > 1:
                    ttls.append(option.args[1])
            for ttl in ttls:
                if ttl.lstrip("-").isdigit() and int(ttl) <= 0:
                    yield codes.COREFILE_TTL_PITFALL.finding(
                        ref(record), f"cache TTL {ttl} in block {keys} (line "
                        f"{directive.line}): CoreDNS refuses a TTL of zero or less",
                        detail="The cache plugin refuses a TTL that is not positive, and "
                        "with it the whole Corefile.",
                        suggestion="Remove the TTL (the default caps at 3600 s) or give a "
                        "positive one, such as 30.",
                        evidence=[evidence(record, "data.Corefile",
                                           f"line {directive.line}: cache "
                                           f"{' '.join(directive.args)}")])
        for directive in block.plugins("kubernetes"):
            plugin = kubernetes_of(directive, block)
            if plugin.ttl > LONG_TTL:
                yield codes.COREFILE_TTL_PITFALL.finding(
                    ref(record), f"kubernetes ttl {plugin.ttl} in block {keys} (line "
                    f"{directive.line}): cluster answers are cached for up to "
                    f"{plugin.ttl} s",
                    detail="Clients and caches keep a Service's or a headless pod's "
                    "address for the record's TTL: after a pod moves or a Service is "
                    "recreated, they use the old address for that long.",
                    suggestion="Keep the default ttl (5) or a few tens of seconds.",
                    evidence=[evidence(record, "data.Corefile",
                                       f"line {directive.line}: ttl {plugin.ttl}")])
        if any(k.zone != "." and in_zone(k.zone, domain) for k in block.keys) \
                and not any(in_zone(k.zone, z) for d in block.plugins("kubernetes")
                            for z in kubernetes_of(d, block).zones for k in block.keys):
            yield codes.COREFILE_ZONE_SHADOWS_CLUSTER_DOMAIN.finding(
                ref(record), f"server block {keys} (line {block.line}) takes names of the "
                f"cluster domain {dns.domain} away from the kubernetes plugin",
                detail="CoreDNS serves a name from the block with the longest matching zone: "
                "every name under this block's zone goes to it, and it has no kubernetes "
                "plugin for them, so those Services and pods do not resolve.",
                suggestion="Remove the block, or give it a zone outside the cluster domain "
                "(stub domains are for other domains).",
                evidence=[evidence(record, "data.Corefile", f"line {block.line}: {keys}")])

