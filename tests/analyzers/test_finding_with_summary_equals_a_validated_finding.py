"""Finding.with_summary shares the validated fields of a finding instead of validating them
again: the copy must be the finding a validated construction gives, in every mode it is
serialised in, frozen like it, and leave the original as it was."""

from __future__ import annotations

import pydantic
import pytest

from netsight.analyzers.core import codes
from netsight.analyzers.core.contracts import DETAIL, Evidence, Finding, ResourceRef

ROUTE = ResourceRef(kind="HTTPRoute", name="web", namespace="shop")


def finding(summary: str) -> Finding:
    return codes.REQUEST_GETS_ERROR.finding(
        ROUTE, summary, detail="no usable backend", suggestion="fix the backendRefs",
        evidence=[Evidence(resource=ROUTE, field_path="spec.rules[0]", value={"a": [1]})])


def test_the_copy_is_the_finding_a_validated_construction_gives() -> None:
    original = finding("GET a/: answers 503")
    copy = original.with_summary("GET b/: answers 503")

    assert copy == finding("GET b/: answers 503")
    assert copy.model_fields_set == finding("x").model_fields_set
    for detail in (True, False):
        assert copy.model_dump(mode="json", context={DETAIL: detail}) == \
            finding("GET b/: answers 503").model_dump(mode="json", context={DETAIL: detail})
    assert original.summary == "GET a/: answers 503"


def test_the_copy_is_frozen() -> None:
    copy = finding("a").with_summary("b")
    with pytest.raises(pydantic.ValidationError):
        copy.summary = "c"
