"""The Service engine: selectors, ports, protocols and the endpoints behind each Service."""
