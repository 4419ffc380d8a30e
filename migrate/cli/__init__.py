"""The `zk2kraft` command line: one module per command, the shared flag groups, the exit codes."""

from migrate.cli.app import build_parser, main

__all__ = ["build_parser", "main"]
