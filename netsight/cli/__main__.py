"""``python -m netsight.cli``: the ``netsight`` script."""

from netsight.cli.main import console

console()
