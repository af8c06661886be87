"""The ``netsight`` command: ``call`` a tool on a cluster, a running server or manifest files,
list the ``tools``, ``serve`` MCP, run the simulated API server (``sim``), and print shell
``completion``. Exit status: :mod:`netsight.cli.command_line`."""

from netsight.cli.command_line import EXIT_FINDINGS, EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE
from netsight.cli.main import build_parser, console, main

__all__ = ["EXIT_FINDINGS", "EXIT_OK", "EXIT_TOOL_ERROR", "EXIT_USAGE", "build_parser",
           "console", "main"]
