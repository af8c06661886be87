"""Routing resolution: Gateway API status as a conformant controller would write it, and
requests through Gateway API and Ingress, from the specs.

One idea per module: ``objects`` reads Gateway API records into typed values,
``conditions`` names condition types and reasons, ``hostnames`` intersects listener and route
hostnames, ``references`` resolves backendRefs and certificateRefs (ReferenceGrant included),
``rules`` finds rules a controller would drop, ``gateways`` computes listener and Gateway
conditions, ``attachment`` decides which listeners accept each route parentRef, ``mesh``
does the same for Service (GAMMA) parents, ``observed`` reads the status the cluster's own
controller wrote, ``requests`` picks the rule one HTTP or gRPC request takes, ``ingresses``
does the same through Ingress and ``ingress_checks`` finds what is wrong with Ingresses,
``report`` and ``findings`` turn results into answers.
"""
