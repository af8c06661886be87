"""Kubernetes' priority order of API versions (apimachinery's
``version.CompareKubeAwareVersionStrings``): GA before beta before alpha, then the higher
major, then the higher minor (v2, v1, v2beta1, v1beta2, v1beta1, v1alpha1); versions not
in that form come last, in lexical order. The API server orders a CRD group's versions
this way and prefers the first."""

from __future__ import annotations

import re
from collections.abc import Iterable

_KUBE_VERSION = re.compile(r"v([0-9]+)(?:(alpha|beta)([0-9]+))?")
_STABILITY = {"alpha": 0, "beta": 1, None: 2}


def priority_key(version: str) -> tuple[int, int, int, int, str]:
    """A key sorting versions from the highest priority to the lowest."""
    match = _KUBE_VERSION.fullmatch(version)
    if match is None:
        # Upstream compares these as plain strings, "foo1" before "foo10".
        return (1, 0, 0, 0, version)
    major, stability, minor = match.groups()
    return (0, -_STABILITY[stability], -int(major), -int(minor or 0), "")


def by_priority(versions: Iterable[str]) -> list[str]:
    """The distinct ``versions``, highest priority first."""
    return sorted(set(versions), key=priority_key)
