"""Errors raised by the migration orchestration and the CLI.

    MigrateError                  root
    ├── BadFlagError              a command-line flag or its value is wrong; names the flag (exit 2)
    ├── TranslationError          the snapshot cannot be translated (names the znode path) (exit 2)
    ├── BlockersFoundError        pre-flight found blockers and no override was given (exit 1)
    └── SparkError                Spark could not start or a Spark job failed (exit 3)
"""

from __future__ import annotations

__all__ = [
    "BadFlagError",
    "BlockersFoundError",
    "MigrateError",
    "SparkError",
    "TranslationError",
]


class MigrateError(Exception):
    """Root of every error raised by `migrate`."""

    exit_code: int = 2


class BadFlagError(MigrateError):
    """A flag is missing, malformed or contradicts another; the message names the flag."""

    exit_code = 2


class TranslationError(MigrateError):
    """A znode's content cannot be expressed as KRaft records (names the path)."""

    exit_code = 2


class BlockersFoundError(MigrateError):
    """The pre-flight found blockers; the migration was not started."""

    exit_code = 1


class SparkError(MigrateError):
    """The Spark session could not start (or reach --spark-master), or a Spark job failed.

    The message names the master and the file holding Spark's own log, which is kept out of the
    terminal.
    """

    exit_code = 3
