"""Subresources of the simulated API server: writes that change one part of an object.

``status`` of any kind, and a pod's ``ephemeralcontainers``: a GET reads the object, a PUT
or PATCH changes only that part (the rest of the body is ignored, as the API server ignores
it), and ephemeral containers may be added but never changed or removed.
"""

from __future__ import annotations

import copy
from typing import Any

from netsight.sim.patching import PatchError, json_patch, merge_patch
from netsight.sim.resources import ResourceType
from netsight.sim.state import ApiError

Part = tuple[str, ...]
EPHEMERAL: Part = ("spec", "ephemeralContainers")
STATUS: Part = ("status",)


def subresource_part(rtype: ResourceType, subresource: str) -> Part:
    """The part of the object a subresource writes; 404 for one the simulator lacks."""
    if subresource == "ephemeralcontainers" and rtype.kind == "Pod" and not rtype.group:
        return EPHEMERAL
    if subresource == "status":
        return STATUS
    raise ApiError(404, "NotFound", "the server could not find the requested resource")


def write_subresource(current: dict[str, Any], part: Part, body: Any,
                      patch_type: str | None) -> dict[str, Any]:
    """``current`` with ``part`` taken from ``body``: a whole object (PUT, ``patch_type``
    None) or a patch of the given content type. Raises 400/422 as the API server would."""
    if patch_type is None:
        if not isinstance(body, dict):
            raise ApiError(400, "BadRequest", "the body must be an object")
        wanted = body
    else:
        wanted = patch_object(current, body, patch_type, part)
    value = _dig(wanted, part)
    if part == EPHEMERAL:
        check_ephemeral_containers(current, value)
    updated = {**current, "metadata": {**current["metadata"]}}
    given = (wanted.get("metadata") or {}).get("resourceVersion")
    updated["metadata"]["resourceVersion"] = given or current["metadata"]["resourceVersion"]
    if part == STATUS:
        updated["status"] = value
    else:
        updated["spec"] = {**(current.get("spec") or {}), "ephemeralContainers": value}
    return updated


def _dig(obj: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def patch_object(current: dict[str, Any], patch: Any, content_type: str,
                 part: tuple[str, ...]) -> dict[str, Any]:
    """``current`` patched. A strategic merge patch merges the list at ``part`` by name
    (ephemeralContainers' patch strategy, which kubectl debug relies on); otherwise the
    patch applies as SimState.patch applies it."""
    try:
        if "json-patch" in content_type:
            result: dict[str, Any] = json_patch(copy.deepcopy(current), patch)
            return result
        if not isinstance(patch, dict):
            raise PatchError("a merge patch must be a JSON object")
        listed = _dig(patch, part)
        if "strategic" in content_type and isinstance(listed, list):
            merged = {c.get("name"): c for c in _dig(current, part) or ()}
            for entry in listed:
                if isinstance(entry, dict):
                    merged[entry.get("name")] = merge_patch(
                        copy.deepcopy(merged.get(entry.get("name")) or {}), entry)
            patch = copy.deepcopy(patch)
            holder = patch
            for key in part[:-1]:
                holder = holder[key]
            holder[part[-1]] = list(merged.values())
        patched: dict[str, Any] = merge_patch(copy.deepcopy(current), patch)
        return patched
    except PatchError as exc:
        raise ApiError(400, "BadRequest", str(exc)) from None


def check_ephemeral_containers(pod: dict[str, Any], wanted: Any) -> None:
    """Ephemeral containers may be added, never changed or removed (422, as upstream's
    validation says), and each needs a name no other container of the pod has."""
    if not isinstance(wanted, list) or not all(isinstance(c, dict) for c in wanted):
        raise ApiError(422, "Invalid", "spec.ephemeralContainers: must be a list of containers")
    spec = pod.get("spec") or {}
    existing = {c.get("name"): c for c in spec.get("ephemeralContainers") or ()}
    names = [c.get("name") for c in wanted]
    for name, container in existing.items():
        if name not in names or next(c for c in wanted if c.get("name") == name) != container:
            raise ApiError(422, "Invalid", f"Pod \"{pod['metadata']['name']}\" is invalid: "
                           "spec.ephemeralContainers: Forbidden: existing ephemeral containers "
                           f"\"{name}\" may not be changed")
    taken = {c.get("name") for section in ("containers", "initContainers")
             for c in spec.get(section) or ()}
    for container in wanted:
        name = container.get("name")
        if not isinstance(name, str) or not name:
            raise ApiError(422, "Invalid", "spec.ephemeralContainers[].name: Required value")
        if name in taken or names.count(name) > 1:
            raise ApiError(422, "Invalid", f"spec.ephemeralContainers[].name: Duplicate value: "
                           f"\"{name}\"")
        if name not in existing and not container.get("image"):
            raise ApiError(422, "Invalid", "spec.ephemeralContainers[].image: Required value")
