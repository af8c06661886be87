"""The simulated kubelet (and scheduler): pods created through the API come to life.

A pod created without a status — as every client creates one; synthetic clusters and the
demo load theirs with a status and are left alone — is bound to a node and reported
Pending, then, ``start_delay`` seconds later, Running with an address from its node's pod
range and its Ready condition from its readiness probes. A probe pod (one carrying the
``netsight.io/probe`` annotation) runs its probe: the simulated data plane decides what it
observes, and after the probe's simulated duration its container terminates with the
probe's answer as its termination message and exit code, and the pod Succeeds or Fails.
``activeDeadlineSeconds`` ends a pod that runs too long (Failed, DeadlineExceeded), and an
ephemeral container added through ``pods/{name}/ephemeralcontainers`` runs in its pod, a
probe's answer again in ``ephemeralContainerStatuses``.

Every transition is an ordinary write, so watches and informers see each as an event. The
kubelet follows writes as an observer of the state and does work only for the pods it was
handed (created without a status, or given an ephemeral container): it never walks all pods.
``time_scale`` shrinks every simulated duration (probe run times, deadlines) for tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import itertools
import posixpath
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from netsight.sim.dataplane.probing import DataPlane
from netsight.sim.dataplane.snapshot import container_ports
from netsight.sim.dataplane.spec import ANNOTATION, ENV_VAR
from netsight.sim.recorder import EventRecorder
from netsight.sim.state import ApiError, Event, Obj, SimState, now

POD: Final = ("", "Pod")
NODE: Final = ("", "Node")
DEFAULT_NODE: Final = "sim-node"  # where pods go when the cluster holds no Node
DEADLINE_MESSAGE: Final = "Pod was active on the node longer than the specified deadline"
# The container's exit status when the kubelet kills it (SIGKILL after the grace period).
KILLED: Final = 137
_ANNOTATION_REF = re.compile(r"""^metadata\.annotations\[['"]([^'"]+)['"]\]$""")
_FAILING_COMMANDS: Final = frozenset({"false"})
_SHELLS: Final = frozenset({"sh", "bash", "ash", "dash"})
_EXIT = re.compile(r"exit\s+(\d+)")


@dataclass
class KubeletConfig:
    start_delay: float = 0.05  # seconds from Pending to Running
    time_scale: float = 1.0  # real seconds per simulated second (probe run times, deadlines)
    pod_cidr: str = "10.244.0.0/16"  # carved into a /24 per node that has no spec.podCIDR


class Kubelet:
    """Runs the pods of a :class:`SimState` that need running; :meth:`start` in a loop."""

    def __init__(self, state: SimState, config: KubeletConfig | None = None) -> None:
        self.state = state
        self.config = config or KubeletConfig()
        self.pod_type = state.registry.require("v1", "Pod")
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._ephemeral: dict[str, set[str]] = {}  # pod key -> ephemeral containers run
        self._used_ips: set[str] | None = None  # built at the first allocation
        self._node_ranges: dict[str, Iterator[ipaddress.IPv4Address | ipaddress.IPv6Address]] = {}
        self._next_node = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self.recorder = EventRecorder(state, "kubelet")

    # --- following the state ---------------------------------------------------------------

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.state.observers.append(self.observe)
        # Pods created without a status before it started wait for it, as unscheduled pods
        # wait for a scheduler that starts late.
        for key, pod in list(self.state.objects.get(POD, {}).items()):
            if not (pod.get("status") or {}).get("phase"):
                self._spawn(key, self._run_pod(key))

    async def stop(self) -> None:
        if self.observe in self.state.observers:
            self.state.observers.remove(self.observe)
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()

    def observe(self, event: Event) -> None:
        if event.storage != POD or self._loop is None:
            return
        meta = event.new["metadata"]
        key = f"{meta.get('namespace')}/{meta['name']}"
        if event.type == "DELETED":
            self._forget(key, event.new)
            return
        if event.type == "ADDED":
            if not (event.new.get("status") or {}).get("phase"):
                self._spawn(key, self._run_pod(key))
            return
        added = _ephemeral_names(event.new) - _ephemeral_names(event.old or {})
        for name in sorted(added):
            self._spawn(f"{key}#{name}", self._run_ephemeral(key, name))

    def _spawn(self, key: str, work: Any) -> None:
        assert self._loop is not None
        task = self._loop.create_task(work, name=f"kubelet {key}")
        self._tasks[key] = task
        task.add_done_callback(lambda done: self._done(key, done))

    def _done(self, key: str, task: asyncio.Task[None]) -> None:
        if self._tasks.get(key) is task:
            del self._tasks[key]
        if not task.cancelled() and (error := task.exception()) is not None:
            # A bug, not a simulated failure: keep it visible in the loop's handler.
            task.get_loop().call_exception_handler(
                {"message": f"kubelet: {key} failed", "exception": error, "task": task})

    def _forget(self, key: str, pod: Obj) -> None:
        for task_key in [k for k in self._tasks if k == key or k.startswith(f"{key}#")]:
            self._tasks.pop(task_key).cancel()
        self._ephemeral.pop(key, None)
        if self._used_ips is not None:
            for entry in (pod.get("status") or {}).get("podIPs") or ():
                self._used_ips.discard(entry.get("ip"))

    # --- a pod's life ----------------------------------------------------------------------

    async def _run_pod(self, key: str) -> None:
        await asyncio.sleep(0)  # out of the write that created it
        pod = self._current(key)
        if pod is None:
            return
        spec = pod.get("spec") or {}
        node = spec.get("nodeName") or self._schedule()
        started = now()
        self._write(key, lambda p: _pending(p, node, self._host_ip(node), started))
        deadline = spec.get("activeDeadlineSeconds")
        loop = asyncio.get_running_loop()
        ends = None if deadline is None else loop.time() + int(deadline) * self.config.time_scale
        try:
            async with asyncio.timeout_at(ends):
                await self._live(key, node, started)
        except TimeoutError:
            pass
        else:
            if ends is None:
                return
            await asyncio.sleep(max(0.0, ends - loop.time()))  # a pod that keeps running
        self._write(key, _deadline_exceeded)  # nothing to do if it ended meanwhile

    async def _live(self, key: str, node: str, started: str) -> None:
        await asyncio.sleep(self.config.start_delay)
        pod = self._current(key)
        if pod is None:
            return
        address = self._host_ip(node) if (pod.get("spec") or {}).get("hostNetwork") \
            else self._allocate(node)
        crashing = _crashing(pod)
        ready = self._ready(pod) and not crashing
        pod = self._write(key, lambda p: _running(p, address, ready, now(), crashing))
        if pod is not None:
            self._report(pod, crashing, ready)
        if ANNOTATION not in ((pod or {}).get("metadata", {}).get("annotations") or {}):
            return  # an ordinary pod: its containers run until it is deleted
        assert pod is not None
        results = {}
        longest = 0.0
        for container in (pod.get("spec") or {}).get("containers") or ():
            observation = DataPlane(self.state.objects, self.state.network).probe(
                pod, _probe_text(pod, container))
            results[container["name"]] = (observation.exit_code, observation.message())
            longest = max(longest, observation.seconds)
        await asyncio.sleep(longest * self.config.time_scale)
        self._write(key, lambda p: _terminated(p, results, now()))

    async def _run_ephemeral(self, key: str, name: str) -> None:
        await asyncio.sleep(self.config.start_delay)
        pod = self._current(key)
        if pod is None or (pod.get("status") or {}).get("phase") != "Running":
            return  # the kubelet starts ephemeral containers in running pods only
        container = next(c for c in pod["spec"]["ephemeralContainers"] if c.get("name") == name)
        started = now()
        self._write(key, lambda p: _ephemeral_status(p, container, {"running": {
            "startedAt": started}}))
        text = _probe_text(pod, container, fallback=False)
        if text is None:
            return  # not a probe: it runs until the pod goes
        observation = DataPlane(self.state.objects, self.state.network).probe(pod, text)
        await asyncio.sleep(observation.seconds * self.config.time_scale)
        self._write(key, lambda p: _ephemeral_status(p, container, {"terminated": _exit(
            p, container, observation.exit_code, observation.message(), started, now())}))

    def _report(self, pod: Obj, crashing: frozenset[str], ready: bool) -> None:
        """The Warnings the kubelet records about a running pod that is not well."""
        name = pod["metadata"]["name"]
        for container in sorted(crashing):
            self.recorder.record(pod, "Warning", "BackOff",
                                 f"Back-off restarting failed container {container} in pod "
                                 f"{name}", "Restarting")
        if not ready and not crashing:
            self.recorder.record(pod, "Warning", "Unhealthy",
                                 "Readiness probe failed: the container does not answer on "
                                 "its probe's port", "Probing")

    # --- helpers ---------------------------------------------------------------------------

    def _current(self, key: str) -> Obj | None:
        return self.state.objects.get(POD, {}).get(key)

    def _write(self, key: str, change: Callable[[Obj], Obj | None], *,
               missing_ok: bool = True) -> Obj | None:
        """Replace the pod with ``change(pod)`` (None: leave it); None when it is gone."""
        pod = self._current(key)
        if pod is None:
            return None
        new = change(pod)
        if new is None:
            return pod
        namespace, _, name = key.partition("/")
        new["metadata"] = {**pod["metadata"]}
        try:
            return self.state.replace(self.pod_type, new, namespace, name, owned=True)
        except ApiError as exc:
            if exc.code == 404 and missing_ok:
                return None
            raise

    def _schedule(self) -> str:
        nodes = sorted(name for name, node in self.state.objects.get(NODE, {}).items()
                       if not (node.get("spec") or {}).get("unschedulable"))
        if not nodes:
            return DEFAULT_NODE
        self._next_node += 1
        return nodes[(self._next_node - 1) % len(nodes)]

    def _host_ip(self, node: str) -> str:
        obj = self.state.objects.get(NODE, {}).get(node) or {}
        for address in (obj.get("status") or {}).get("addresses") or ():
            if address.get("type") == "InternalIP":
                return str(address["address"])
        return ""

    def _allocate(self, node: str) -> str:
        if self._used_ips is None:
            self._used_ips = {str(e.get("ip")) for pod in self.state.objects.get(POD, {}).values()
                              for e in (pod.get("status") or {}).get("podIPs") or ()}
            self._used_ips |= {str((pod.get("status") or {}).get("podIP"))
                               for pod in self.state.objects.get(POD, {}).values()}
        hosts = self._node_ranges.get(node)
        if hosts is None:
            hosts = self._node_ranges[node] = self._range(node)
        for address in hosts:
            ip = str(address)
            if ip not in self._used_ips:
                self._used_ips.add(ip)
                return ip
        raise ApiError(500, "InternalError", f"node {node}'s pod range is exhausted")

    def _range(self, node: str) -> Iterator[ipaddress.IPv4Address | ipaddress.IPv6Address]:
        obj = self.state.objects.get(NODE, {}).get(node) or {}
        cidr = (obj.get("spec") or {}).get("podCIDR")
        if not cidr:
            subnets = ipaddress.ip_network(self.config.pod_cidr).subnets(new_prefix=24)
            cidr = str(next(itertools.islice(subnets, len(self._node_ranges), None)))
        return _cycle(ipaddress.ip_network(cidr))

    def _ready(self, pod: Mapping[str, Any]) -> bool:
        """Whether every container's readiness probe passes, as far as the simulation can
        tell: an exec of ``false`` never does; a tcpSocket or httpGet probe passes when the
        pod listens on its port (and HTTP answers 2xx/3xx); any other exec is taken to pass."""
        key = f"{pod['metadata'].get('namespace')}/{pod['metadata']['name']}"
        network = self.state.network
        declared = {int(p.get("containerPort") or 0) for p in container_ports(pod)}
        for container in (pod.get("spec") or {}).get("containers") or ():
            probe = container.get("readinessProbe")
            if not probe:
                continue
            if "exec" in probe:
                if _fails((probe["exec"] or {}).get("command") or []):
                    return False
                continue
            action = probe.get("tcpSocket") or probe.get("httpGet") or probe.get("grpc")
            port = _probe_port(container, (action or {}).get("port"))
            if port is None or not network.listens(key, port, port in declared):
                return False
            if "httpGet" in probe and not 200 <= network.http_status.get(key, 200) < 400:
                return False
        return True


def _cycle(network: ipaddress.IPv4Network | ipaddress.IPv6Network
           ) -> Iterator[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The range's addresses but the first (the node's bridge), over and over: those of
    deleted pods come free again once the range is used up."""
    while True:
        yield from itertools.islice(network.hosts(), 1, None)


# --- status documents ------------------------------------------------------------------------


def _fails(command: list[Any]) -> bool:
    """Whether an exec probe's command surely fails: ``false``, or a shell told to ``false``
    or to ``exit`` non-zero. Others are taken to pass: the simulation runs no commands."""
    if not command:
        return True
    if posixpath.basename(str(command[0])) in _FAILING_COMMANDS:
        return True
    if posixpath.basename(str(command[0])) in _SHELLS and len(command) >= 3 \
            and command[1] == "-c":
        script = str(command[2]).strip()
        exit_code = _EXIT.fullmatch(script)
        return script in _FAILING_COMMANDS or (exit_code is not None and exit_code[1] != "0")
    return False


def _ephemeral_names(pod: Mapping[str, Any]) -> set[str]:
    return {str(c.get("name")) for c in (pod.get("spec") or {}).get("ephemeralContainers") or ()}


def _probe_port(container: Mapping[str, Any], port: Any) -> int | None:
    if isinstance(port, int):
        return port
    for entry in container.get("ports") or ():
        if entry.get("name") == port:
            return int(entry["containerPort"])
    return None


def _probe_text(pod: Mapping[str, Any], container: Mapping[str, Any], *, fallback: bool = True
                ) -> str | None:
    """The probe's spec as the container receives it: ``NETSIGHT_PROBE`` by value or through
    the downward API from an annotation; else (a probe pod's container) the annotation."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    for env in container.get("env") or ():
        if env.get("name") != ENV_VAR:
            continue
        if "value" in env:
            return str(env["value"])
        path = ((env.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath", "")
        found = _ANNOTATION_REF.match(str(path))
        if found:
            value = annotations.get(found[1])
            return None if value is None else str(value)
    return annotations.get(ANNOTATION) if fallback else None


def _condition(kind: str, status: bool, stamp: str, reason: str | None = None) -> Obj:
    condition: Obj = {"type": kind, "status": "True" if status else "False",
                      "lastProbeTime": None, "lastTransitionTime": stamp}
    if reason:
        condition["reason"] = reason
    return condition


def _container_id(pod: Mapping[str, Any], name: str) -> str:
    return f"containerd://{pod['metadata'].get('uid', '')[:8]}-{name}"


def _pending(pod: Obj, node: str, host_ip: str, stamp: str) -> Obj:
    status: Obj = {"phase": "Pending", "conditions": [_condition("PodScheduled", True, stamp)],
                   "startTime": stamp, "qosClass": "Burstable"}
    if host_ip:
        status.update(hostIP=host_ip, hostIPs=[{"ip": host_ip}])
    waiting = {"waiting": {"reason": "ContainerCreating"}}
    status["containerStatuses"] = [
        {"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": False,
         "restartCount": 0, "started": False, "state": waiting}
        for c in (pod.get("spec") or {}).get("containers") or ()]
    return {**pod, "spec": {**(pod.get("spec") or {}), "nodeName": node}, "status": status}


def _crashing(pod: Mapping[str, Any]) -> frozenset[str]:
    """Containers whose command surely exits non-zero (as _fails reads it): the kubelet
    restarts them with a growing back-off (CrashLoopBackOff)."""
    return frozenset(c["name"] for c in (pod.get("spec") or {}).get("containers") or ()
                     if c.get("command") and _fails(list(c["command"]) + list(c.get("args")
                                                                               or ())))


def _running(pod: Obj, address: str, ready: bool, stamp: str,
             crashing: frozenset[str] = frozenset()) -> Obj:
    old = pod.get("status") or {}
    containers = (pod.get("spec") or {}).get("containers") or ()
    reason = None if ready else "ContainersNotReady"
    status: Obj = {
        **old, "phase": "Running", "podIP": address, "podIPs": [{"ip": address}],
        "conditions": [
            _condition("PodReadyToStartContainers", True, stamp),
            _condition("Initialized", True, stamp),
            _condition("Ready", ready, stamp, reason),
            _condition("ContainersReady", ready, stamp, reason),
            _condition("PodScheduled", True, old.get("startTime", stamp)),
        ],
        "containerStatuses": [
            {"name": c["name"], "image": c.get("image", ""), "imageID": "",
             "containerID": _container_id(pod, c["name"]), "ready": ready, "restartCount": 0,
             "started": True, "state": {"running": {"startedAt": stamp}}}
            if c["name"] not in crashing else
            {"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": False,
             "restartCount": 5, "started": False, "lastState": {"terminated": {
                 "exitCode": 1, "reason": "Error", "finishedAt": stamp}},
             "state": {"waiting": {"reason": "CrashLoopBackOff", "message":
                                   f"back-off 2m40s restarting failed container={c['name']}"}}}
            for c in containers],
    }
    return {**pod, "status": status}


def _exit(pod: Mapping[str, Any], container: Mapping[str, Any], code: int, message: str,
          started: str, finished: str) -> Obj:
    terminated: Obj = {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                       "startedAt": started, "finishedAt": finished,
                       "containerID": _container_id(pod, str(container["name"]))}
    if message:
        terminated["message"] = message
    return terminated


def _terminated(pod: Obj, results: Mapping[str, tuple[int, str]], stamp: str) -> Obj | None:
    old = pod.get("status") or {}
    if old.get("phase") != "Running":
        return None
    policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
    statuses = []
    for entry in old.get("containerStatuses") or ():
        code, message = results.get(entry["name"], (0, ""))
        started = ((entry.get("state") or {}).get("running") or {}).get("startedAt", stamp)
        done = _exit(pod, entry, code, message, started, stamp)
        if policy == "Never" or (policy == "OnFailure" and code == 0):
            statuses.append({**entry, "ready": False, "started": False,
                             "state": {"terminated": done}})
        else:
            # It would be restarted; the simulation runs a probe once and shows the
            # kubelet backing off, with the run's end as the last state.
            statuses.append({**entry, "ready": False, "started": False, "restartCount": 1,
                             "lastState": {"terminated": done},
                             "state": {"waiting": {"reason": "CrashLoopBackOff"}}})
    terminal = all("terminated" in s["state"] for s in statuses)
    failed = any(s["state"]["terminated"]["exitCode"] != 0 for s in statuses) if terminal \
        else False
    conditions = [
        c if c["type"] not in ("Ready", "ContainersReady") else _condition(
            c["type"], False, stamp, "PodCompleted" if terminal else "ContainersNotReady")
        for c in old.get("conditions") or ()]
    phase = ("Failed" if failed else "Succeeded") if terminal else "Running"
    return {**pod, "status": {**old, "phase": phase, "conditions": conditions,
                              "containerStatuses": statuses}}


def _deadline_exceeded(pod: Obj) -> Obj | None:
    old = pod.get("status") or {}
    if old.get("phase") in ("Succeeded", "Failed"):
        return None
    stamp = now()
    statuses = []
    for entry in old.get("containerStatuses") or ():
        state = entry.get("state") or {}
        if "terminated" not in state:
            started = (state.get("running") or {}).get("startedAt", stamp)
            state = {"terminated": _exit(pod, entry, KILLED, "", started, stamp)}
        statuses.append({**entry, "ready": False, "started": False, "state": state})
    conditions = [
        c if c["type"] not in ("Ready", "ContainersReady")
        else _condition(c["type"], False, stamp, "PodFailed")
        for c in old.get("conditions") or ()]
    return {**pod, "status": {**old, "phase": "Failed", "reason": "DeadlineExceeded",
                              "message": DEADLINE_MESSAGE, "conditions": conditions,
                              "containerStatuses": statuses}}


def _ephemeral_status(pod: Obj, container: Mapping[str, Any], state: Obj) -> Obj:
    old = pod.get("status") or {}
    name = container["name"]
    entry: Obj = {"name": name, "image": container.get("image", ""), "imageID": "",
                  "containerID": _container_id(pod, name), "ready": False,
                  "restartCount": 0, "state": state}
    others = [s for s in old.get("ephemeralContainerStatuses") or () if s.get("name") != name]
    return {**pod, "status": {**old, "ephemeralContainerStatuses": [*others, entry]}}
