"""Gateway API resolution: the status a conformant controller would write, from the spec.

One idea per module: ``objects`` reads Gateway API records into typed values,
``conditions`` names condition types and reasons, ``hostnames`` intersects listener and route
hostnames, ``references`` resolves backendRefs and certificateRefs (ReferenceGrant included),
``rules`` finds rules a controller would drop, ``gateways`` computes listener and Gateway
conditions, ``attachment`` decides which listeners accept each route parentRef,
``observed`` reads the status the cluster's own controller wrote, ``requests`` picks the rule
one HTTP request takes, ``report`` and ``findings`` turn results into answers.
"""
