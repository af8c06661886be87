"""What every ``netsight`` command shares: its exit status, and a parser that says a usage
error with its own status rather than argparse's 2, which is netsight's tool error."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

EXIT_OK = 0
EXIT_FINDINGS = 1  # netsight call: a finding at or above --fail-on
EXIT_TOOL_ERROR = 2  # the tool answered with an error (bad argument, not found, ...)
EXIT_USAGE = 3  # the command line itself: an unknown flag, a bad flag value, no tool

EXIT_STATUS = f"""\
exit status:
  {EXIT_OK}  an answer (and no finding at or above --fail-on)
  {EXIT_FINDINGS}  a finding at or above --fail-on
  {EXIT_TOOL_ERROR}  a tool error, printed as JSON: {{"code", "message", "tool"}}
  {EXIT_USAGE}  a usage error: the command line itself"""


class Parser(argparse.ArgumentParser):
    """argparse, exiting with :data:`EXIT_USAGE` on a usage error."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs as written (the exit status table keeps its lines)."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32)
