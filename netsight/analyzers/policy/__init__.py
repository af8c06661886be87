"""The policy engine: which policies decide whether traffic between two endpoints flows.

Three stages, after network-policy-api's policy-assistant: *build* (records -> the small
matcher types of :mod:`netpol`, :mod:`anp` and :mod:`cnp`), *model* (those types, pure and
immutable) and *evaluate* (:mod:`engine`: a :class:`verdict.Verdict` that explains itself
layer by layer, three-valued). Tools build on :func:`endpoints.resolve`,
:class:`engine.PolicyEngine` and the wire models of :mod:`results`; :mod:`suggest` proposes
the smallest change that admits a denied flow.
"""
