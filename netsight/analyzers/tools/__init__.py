"""One module per MCP tool: typed arguments -> analyze -> typed result."""
