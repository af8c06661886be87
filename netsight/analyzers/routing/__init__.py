"""Gateway API resolution: the status a conformant controller would write, from the spec.

Built in small steps, one idea per module: ``objects`` reads Gateway API records into typed
values, ``hostnames`` intersects listener and route hostnames, ``references`` resolves
backendRefs and certificateRefs (ReferenceGrant included), ``gateways`` computes listener
and Gateway conditions, ``attachment`` decides which listeners accept each route parentRef,
``observed`` compares all of it with the status the cluster's own controller wrote.
"""
