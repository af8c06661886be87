"""The policy engine: which policies decide whether traffic between two endpoints flows.

Three stages, after network-policy-api's policy-assistant: *build* (records -> the small
matcher types of :mod:`netpol` and :mod:`anp`), *model* (those types, pure and immutable)
and *evaluate* (:mod:`engine`, a :class:`~netsight.analyzers.policy.verdict.Verdict` that
explains itself layer by layer). Tools build on :class:`engine.PolicyEngine` and
:func:`endpoints.resolve`.
"""
