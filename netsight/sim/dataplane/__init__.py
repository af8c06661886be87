"""The simulated data plane: what a probe pod would observe, decided from the cluster's objects.

It plays the CNI (which policies are enforced), kube-proxy (Services to ready endpoints),
kube-dns (records, search paths), the mesh (mTLS) and the applications (listeners, HTTP
answers), with injectable faults. Its evaluators are written here from the Kubernetes specs
and share no code with netsight's analyzers or graph (an import-linter contract), so a probe
that agrees with a static verdict is independent evidence for it.
"""
