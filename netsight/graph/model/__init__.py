"""What the graph holds: object kinds, slim records, label selectors."""
