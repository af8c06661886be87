"""Client certificate validation on a Gateway's TLS listeners (GEP-91, Gateway API v1).

``spec.tls.frontend.default.validation`` applies to every listener that terminates TLS, and
a ``perPort`` entry replaces it for the listeners on its port. Its ``caCertificateRefs``
(a core ConfigMap is Core support) are references like any other: one of another kind is
InvalidCACertificateKind, one into another namespace needs a ReferenceGrant
(RefNotPermitted), one that does not exist — or whose ``ca.crt`` a manifest shows is not
a PEM bundle — is InvalidCACertificateRef (one absent from manifests is not evaluated:
references.not_in_input); each makes the listener's ResolvedRefs False,
and with no usable ref left the listener is not Accepted (NoValidCACertificate), as
conformance GatewayInvalidFrontendClientCertificateValidation asserts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing.backend_tls import CONFIG_MAP
from netsight.analyzers.routing.gateway_objects import (
    GATEWAY,
    Listener,
    as_list,
    as_map,
    not_in_input,
    opt_port,
    opt_str,
    spec_of,
)
from netsight.analyzers.routing.references import HIDDEN, Grants, Shows, shows_all
from netsight.graph.model.kinds import make_key
from netsight.graph.model.records import ConfigMapRecord, Record
from netsight.graph.store.live import GraphView, Source

INVALID_CA_CERTIFICATE_KIND = "InvalidCACertificateKind"
INVALID_CA_CERTIFICATE_REF = "InvalidCACertificateRef"
NO_VALID_CA_CERTIFICATE = "NoValidCACertificate"


def _validation(gateway: Record, port: int | None) -> tuple[str, Mapping[str, Any]] | None:
    """(field path, the validation block) that applies to a listener on ``port``."""
    frontend = as_map(as_map(spec_of(gateway).get("tls")).get("frontend"))
    for i, entry in enumerate(as_list(frontend.get("perPort"))):
        entry = as_map(entry)
        if port is not None and opt_port(entry.get("port")) == port:
            return (f"spec.tls.frontend.perPort[{i}].tls.validation",
                    as_map(as_map(entry.get("tls")).get("validation")))
    default = as_map(as_map(frontend.get("default")).get("validation"))
    return ("spec.tls.frontend.default.validation", default) if default else None


def check(view: GraphView, grants: Grants, gateway: Record, listener: Listener,
          notes: list[str], shows: Shows = shows_all) -> tuple[c.Cond | None, c.Cond | None]:
    """(ResolvedRefs False, Accepted False) for the client certificate validation of one
    listener, each None when it has nothing to say (what is wrong with a ConfigMap
    ``shows`` hides left out)."""
    terminates = listener.protocol == "HTTPS" or (
        listener.protocol == "TLS" and listener.tls is not None
        and listener.tls_mode == "Terminate")
    found = _validation(gateway, listener.port) if terminates else None
    if found is None:
        return None, None
    path, validation = found
    refs = [as_map(r) for r in as_list(validation.get("caCertificateRefs"))]
    if not refs:
        return None, None
    failed: list[tuple[str, str]] = []
    undecided: list[str] = []
    for i, ref in enumerate(refs):
        problem = _problem(view, grants, gateway, ref, f"{path}.caCertificateRefs[{i}]",
                           notes, shows)
        if problem is None:
            continue
        if problem[0] == c.PENDING:
            undecided.append(problem[1])
        else:
            failed.append(problem)
    if not failed:
        if not undecided:
            return None, None
        # Whether any ref is usable depends on the ones not evaluated.
        pending = c.unknown("; ".join(undecided))
        return pending, pending if len(undecided) == len(refs) else None
    reason, message = failed[0]
    more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
    resolved = c.false(reason, message + more)
    if len(failed) == len(refs):
        return resolved, c.false(NO_VALID_CA_CERTIFICATE,
                                 f"no valid caCertificateRef: {message}")
    if len(failed) + len(undecided) == len(refs):
        return resolved, c.unknown(f"whether a caCertificateRef is usable is not evaluated: "
                                   f"{'; '.join(undecided)}")
    return resolved, None


def _problem(view: GraphView, grants: Grants, gateway: Record, ref: Mapping[str, Any],
             path: str, notes: list[str], shows: Shows) -> tuple[str, str] | None:
    group, kind = str(ref.get("group") or ""), opt_str(ref.get("kind")) or CONFIG_MAP
    name = opt_str(ref.get("name")) or ""
    namespace = opt_str(ref.get("namespace")) or gateway.namespace
    where = f"{path} ({kind} {namespace}/{name})"
    if (group, kind) != ("", CONFIG_MAP):
        return INVALID_CA_CERTIFICATE_KIND, (f"{where}: kind {kind} of group "
                                             f"{group or 'core'} is not supported (a core "
                                             "ConfigMap is)")
    if not name:
        # name is required (ObjectName, minLength 1): no object made elsewhere can match.
        return INVALID_CA_CERTIFICATE_REF, f"{where}: the reference has no name"
    if namespace != gateway.namespace and not grants.permits(
            from_kind=GATEWAY, from_namespace=gateway.namespace, to_group="",
            to_kind=CONFIG_MAP, to_namespace=namespace, to_name=name):
        return c.REF_NOT_PERMITTED, (f"{where}: no ReferenceGrant in namespace {namespace} "
                                     f"allows Gateways from {gateway.namespace}")
    unknown = view.untracked(CONFIG_MAP)
    if unknown is not None:
        notes.append(f"gateway {gateway.namespace}/{gateway.name} {where}: ConfigMap "
                     f"existence not evaluated ({unknown})")
        return None
    record = view.get(make_key(CONFIG_MAP, namespace, name))
    if record is None:
        if view.source is Source.MANIFESTS:
            notes.append(f"gateway {gateway.namespace}/{gateway.name} "
                         f"{not_in_input(CONFIG_MAP, where)}")
            return c.PENDING, not_in_input(CONFIG_MAP, where)
        return INVALID_CA_CERTIFICATE_REF, f"{where}: ConfigMap not found"
    if isinstance(record, ConfigMapRecord) and record.ca_problem is not None:
        problem = record.ca_problem if shows(record.key) else \
            f"the ConfigMap is {HIDDEN}: what is wrong is not shown"
        return INVALID_CA_CERTIFICATE_REF, f"{where}: ConfigMap data is malformed ({problem})"
    return None


INSECURE_FRONTEND_VALIDATION_MODE = "InsecureFrontendValidationMode"
CONFIGURATION_CHANGED = "ConfigurationChanged"


def insecure_fallback(gateway: Record) -> c.Cond | None:
    """InsecureFrontendValidationMode=True/ConfigurationChanged when a validation block's
    ``mode`` is AllowInsecureFallback (FrontendValidationModeType: connections without a
    valid client certificate are accepted too), as conformance
    GatewayFrontendClientCertificateValidationInsecureFallback asserts; None otherwise."""
    frontend = as_map(as_map(spec_of(gateway).get("tls")).get("frontend"))
    blocks = [("spec.tls.frontend.default.validation",
               as_map(as_map(frontend.get("default")).get("validation")))]
    blocks += [(f"spec.tls.frontend.perPort[{i}].tls.validation",
                as_map(as_map(as_map(entry).get("tls")).get("validation")))
               for i, entry in enumerate(as_list(frontend.get("perPort")))]
    insecure = [path for path, block in blocks if block.get("mode") == "AllowInsecureFallback"]
    if not insecure:
        return None
    return c.true(CONFIGURATION_CHANGED, f"{', '.join(insecure)}: mode AllowInsecureFallback "
                  "lets clients without a valid certificate connect")
