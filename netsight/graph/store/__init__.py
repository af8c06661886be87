"""The live graph: the store, incremental building, and read-only views (whole, overlaid,
scoped)."""
