"""The cluster DNS configuration's pitfalls: a Corefile CoreDNS would refuse or that hides
the cluster's names (NS0812-NS0816). The NS08xx codes that concern one name's resolution
are reported by check_dns_resolution and registered here, their one owner."""

from __future__ import annotations

from collections.abc import Iterator

from netsight.analyzers.core import codes
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.core.declarations import AnalyzerMetadata, Check
from netsight.analyzers.services import cluster_dns
from netsight.graph.model.records import DNS_CONFIG_MAPS
from netsight.graph.store.live import GraphView

CONFIG_CODES = (codes.COREFILE_FORWARD_NOT_AN_ADDRESS, codes.COREFILE_ZONE_SHADOWS_CLUSTER_DOMAIN,
                codes.COREFILE_TTL_PITFALL, codes.COREFILE_UNPARSEABLE,
                codes.COREFILE_NO_KUBERNETES)
NAME_CODES = (codes.DNS_NAME_INVALID, codes.DNS_SEARCH_PATH_WALK,
              codes.DNS_CLUSTER_NAME_NOT_FOUND, codes.DNS_SHORT_NAME_IN_OTHER_NAMESPACE,
              codes.DNS_HEADLESS_NO_READY_ENDPOINTS, codes.DNS_POD_RECORDS_DISABLED,
              codes.DNS_POD_RECORDS_INSECURE, codes.DNS_POLICY_DEFAULT,
              codes.DNS_HOST_NETWORK_WITHOUT_CLUSTER_FIRST, codes.DNS_NAME_REWRITTEN,
              codes.DNS_NAMESPACE_NOT_SERVED)

METADATA = AnalyzerMetadata(
    name="cluster_dns",
    description="The cluster DNS ConfigMap's Corefile: forward destinations CoreDNS refuses, "
    "stub domains that shadow the cluster domain, cache and ttl pitfalls, no kubernetes "
    "plugin, a Corefile that does not parse.",
    reads=frozenset({cluster_dns.CONFIG_MAP_KIND}),
    codes=(*CONFIG_CODES, *NAME_CODES),
)


def check(view: GraphView, namespace: str | None) -> Iterator[Finding]:
    if namespace is not None and namespace not in {ns for ns, _ in DNS_CONFIG_MAPS}:
        return
    yield from cluster_dns.read(view).findings


CHECK = Check(METADATA, check)
