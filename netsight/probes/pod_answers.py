"""Reading a probe's answer from its pod's status, as the informer sees it: the probe
container's termination message and exit code (no exec, no logs API)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from netsight.probes.message import MESSAGE_LIMIT, Outcome, ProbeResult

# Waiting reasons after which the container will not start by itself in time.
STUCK = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName",
                   "CreateContainerConfigError", "CreateContainerError", "RunContainerError"})


@dataclass(frozen=True, slots=True)
class Stuck:
    """The probe cannot answer: its pod will not run it, or stopped before it did."""

    reason: str
    message: str


def container_status(pod: Mapping[str, Any], name: str, *, ephemeral: bool = False
                     ) -> Mapping[str, Any] | None:
    status = pod.get("status") or {}
    field = "ephemeralContainerStatuses" if ephemeral else "containerStatuses"
    return next((s for s in status.get(field) or () if s.get("name") == name), None)


def phase(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def answer(pod: Mapping[str, Any], container: str, probe_type: str, *,
           ephemeral: bool = False) -> ProbeResult | Stuck | None:
    """The probe's result once its container terminated; :class:`Stuck` when it never will;
    None while it may still answer."""
    status = container_status(pod, container, ephemeral=ephemeral)
    state = (status or {}).get("state") or {}
    terminated = state.get("terminated")
    if isinstance(terminated, dict):
        return read_message(terminated, probe_type)
    waiting = state.get("waiting") or {}
    if waiting.get("reason") in STUCK:
        return Stuck(str(waiting["reason"]), str(waiting.get("message") or "")[:300])
    pod_status = pod.get("status") or {}
    if not ephemeral and phase(pod) in ("Failed", "Succeeded"):
        # DeadlineExceeded (activeDeadlineSeconds), Evicted, a node lost, ...
        return Stuck(str(pod_status.get("reason") or phase(pod)),
                     str(pod_status.get("message") or "")[:300])
    return None


def read_message(terminated: Mapping[str, Any], probe_type: str) -> ProbeResult:
    """The termination message as a :class:`ProbeResult`; one that is not (a probe that
    crashed: FallbackToLogsOnError put its log's tail there) is an ``error`` outcome."""
    message = str(terminated.get("message") or "")[:MESSAGE_LIMIT]
    try:
        result = ProbeResult.model_validate_json(message)
    except ValidationError:
        code = terminated.get("exitCode")
        excerpt = message.strip()[-300:] or str(terminated.get("reason") or "no message")
        return ProbeResult(type=_type(probe_type), outcome=Outcome.ERROR,
                           error=f"the probe exited {code} without an answer: {excerpt}")
    if result.type != probe_type:
        return ProbeResult(type=_type(probe_type), outcome=Outcome.ERROR,
                           error=f"the probe answered a {result.type} probe, not {probe_type}")
    return result


def _type(probe_type: str) -> Any:
    return probe_type if probe_type in ("tcp", "http", "dns") else "tcp"
