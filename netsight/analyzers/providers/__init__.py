"""Provider health: whether the CNI, the mesh and the gateway controllers run and are
current (status.py)."""
