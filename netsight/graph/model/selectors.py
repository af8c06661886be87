"""Kubernetes label selectors (``metav1.LabelSelector`` and the Service's plain map).

A selector is parsed once, when its object arrives, into a small immutable value that
matches label maps and tells the store which index entries can narrow the candidates.
"""

from __future__ import annotations

import re
import sys
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import NoReturn

from netsight.graph.model.errors import MalformedObject


class Operator(StrEnum):
    IN = "In"
    NOT_IN = "NotIn"
    EXISTS = "Exists"
    DOES_NOT_EXIST = "DoesNotExist"


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: Operator
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        match self.operator:
            case Operator.IN:
                return labels.get(self.key) in self.values
            case Operator.NOT_IN:
                # NotIn matches objects without the key too (apimachinery semantics).
                return labels.get(self.key) not in self.values
            case Operator.EXISTS:
                return self.key in labels
            case Operator.DOES_NOT_EXIST:
                return self.key not in labels


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """``match_labels`` AND every requirement. An empty selector matches everything."""

    match_labels: tuple[tuple[str, str], ...] = ()
    requirements: tuple[Requirement, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not self.match_labels and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        for key, value in self.match_labels:
            if labels.get(key) != value:
                return False
        # A loop rather than all(generator): a new pod identity is tested against every
        # candidate selector of its namespace, and each generator is one more allocation.
        for req in self.requirements:  # noqa: SIM110
            if not req.matches(labels):
                return False
        return True

    def describe(self) -> str:
        """The selector as ``kubectl get -l`` would take it."""
        parts = [f"{k}={v}" for k, v in self.match_labels]
        for req in self.requirements:
            match req.operator:
                case Operator.IN | Operator.NOT_IN:
                    op = "in" if req.operator is Operator.IN else "notin"
                    parts.append(f"{req.key} {op} ({','.join(sorted(req.values))})")
                case Operator.EXISTS:
                    parts.append(req.key)
                case Operator.DOES_NOT_EXIST:
                    parts.append(f"!{req.key}")
        return ",".join(parts) if parts else "<all>"


def parse_string_map(raw: object, path: str) -> dict[str, str]:
    """A ``map[string]string`` such as labels or a Service selector; None means empty."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise MalformedObject(path, f"must be a map of strings, got {type(raw).__name__}")
    for key, value in raw.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise MalformedObject(f"{path}.{key}", "label keys and values must be strings")
    # A copy: records are immutable, so they must not share the caller's dict.
    return dict(raw)


class Labels(dict[str, str]):
    """A label map shared by every record with the same labels; never mutated.

    Shared by thousands of records and the key of their identity in the graph, so every
    mutating method refuses: one accidental write would relabel all of them at once.
    """

    __slots__ = ("__weakref__",)

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("a shared label map is read-only; build a new dict instead")

    __setitem__ = __delitem__ = _refuse
    update = pop = popitem = clear = setdefault = _refuse
    __ior__ = _refuse

    def __reduce__(self) -> tuple[type[dict[str, str]], tuple[dict[str, str]]]:
        # Copies and pickles are plain dicts: the shared map itself is never duplicated.
        return dict, (dict(self),)


# Pods of one ReplicaSet carry identical labels: they share one map.
# Weak values, so label sets no record uses any more (old pod-template-hashes) go away.
_LABELS: weakref.WeakValueDictionary[tuple[tuple[str, str], ...], Labels] = (
    weakref.WeakValueDictionary())


def shared_labels(raw: object, path: str) -> Mapping[str, str]:
    """Like :func:`parse_string_map`, but returns one shared, interned map per label set."""
    if type(raw) is dict:
        # The usual case, a label set seen before: found without copying or checking, as
        # only maps of strings are ever stored and no other value equals a string.
        try:
            found = _LABELS.get(tuple(sorted(raw.items())))
        except TypeError:  # unorderable or unhashable values: the check below reports them
            found = None
        if found is not None:
            return found
    labels = parse_string_map(raw, path)
    key = tuple(sorted(labels.items()))
    shared = _LABELS.get(key)
    if shared is None:
        shared = Labels((sys.intern(k), sys.intern(v)) for k, v in key)
        _LABELS[key] = shared
    return shared


def shared_label_maps() -> int:
    """How many label maps are shared now (a census of the graph's structures)."""
    return len(_LABELS)


def selector_from_map(labels: Mapping[str, str]) -> LabelSelector:
    return LabelSelector(match_labels=tuple(sorted(labels.items())))


def parse_label_selector(raw: object, path: str) -> LabelSelector:
    """Parse a ``metav1.LabelSelector``; None or ``{}`` is the empty selector."""
    if raw is None:
        return LabelSelector()
    if not isinstance(raw, dict):
        raise MalformedObject(path, f"must be a label selector object, got {type(raw).__name__}")
    match_labels = parse_string_map(raw.get("matchLabels"), f"{path}.matchLabels")
    expressions = raw.get("matchExpressions") or []
    if not isinstance(expressions, list):
        raise MalformedObject(f"{path}.matchExpressions", "must be a list")
    requirements = [
        _parse_requirement(expr, f"{path}.matchExpressions[{i}]")
        for i, expr in enumerate(expressions)
    ]
    return LabelSelector(
        match_labels=tuple(sorted(match_labels.items())), requirements=tuple(requirements)
    )


def _parse_requirement(raw: object, path: str) -> Requirement:
    if not isinstance(raw, dict):
        raise MalformedObject(path, "must be an object with key, operator and values")
    key = raw.get("key")
    if not isinstance(key, str) or not key:
        raise MalformedObject(f"{path}.key", "must be a non-empty string")
    try:
        operator = Operator(str(raw.get("operator")))
    except ValueError:
        raise MalformedObject(
            f"{path}.operator",
            f"must be one of In, NotIn, Exists, DoesNotExist; got {raw.get('operator')!r}",
        ) from None
    values = raw.get("values") or []
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise MalformedObject(f"{path}.values", "must be a list of strings")
    # Validation rules from apimachinery: In/NotIn need values, Exists/DoesNotExist forbid them.
    if operator in (Operator.IN, Operator.NOT_IN) and not values:
        raise MalformedObject(f"{path}.values", f"must be non-empty for operator {operator}")
    if operator in (Operator.EXISTS, Operator.DOES_NOT_EXIST) and values:
        raise MalformedObject(f"{path}.values", f"must be empty for operator {operator}")
    return Requirement(key=key, operator=operator, values=frozenset(values))


_SET_TERM = re.compile(r"^\s*([A-Za-z0-9_./-]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")


def parse_selector_string(text: str) -> LabelSelector:
    """Parse the string form used by ``kubectl -l`` and ``?labelSelector=``.

    ``a=b``, ``a==b``, ``a!=b``, ``a in (x,y)``, ``a notin (x)``, ``a``, ``!a``, joined by
    commas. Raises ValueError naming the term it cannot read.
    """
    labels: dict[str, str] = {}
    requirements: list[Requirement] = []
    for term in _split_terms(text):
        term = term.strip()
        if not term:
            continue
        match = _SET_TERM.match(term)
        if match:
            key, op, values = match.groups()
            vals = frozenset(v.strip() for v in values.split(",") if v.strip())
            operator = Operator.IN if op == "in" else Operator.NOT_IN
            requirements.append(Requirement(key, operator, vals))
        elif "!=" in term:
            key, _, value = term.partition("!=")
            requirements.append(Requirement(key.strip(), Operator.NOT_IN,
                                            frozenset({value.strip()})))
        elif "=" in term:
            key, _, value = term.replace("==", "=").partition("=")
            labels[key.strip()] = value.strip()
        elif term.startswith("!"):
            requirements.append(Requirement(term[1:].strip(), Operator.DOES_NOT_EXIST))
        elif re.match(r"^[A-Za-z0-9_./-]+$", term):
            requirements.append(Requirement(term, Operator.EXISTS))
        else:
            raise ValueError(f"cannot read label selector term {term!r}")
    return LabelSelector(match_labels=tuple(sorted(labels.items())),
                         requirements=tuple(requirements))


def _split_terms(text: str) -> list[str]:
    """Split at commas outside parentheses."""
    terms: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            terms.append("".join(current))
            current = []
        else:
            current.append(char)
    terms.append("".join(current))
    return terms
