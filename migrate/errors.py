"""Errors raised by the migration orchestration and the CLI.

    MigrateError                  root
    ├── BadFlagError              a command-line flag or its value is wrong; names the flag (exit 2)
    ├── TranslationError          the snapshot cannot be translated (names the znode path) (exit 2)
    ├── BlockersFoundError        pre-flight found blockers and no override was given (exit 1)
    ├── SparkError                Spark could not start or a Spark job failed (exit 3)
    ├── ReportWriteError          a report (--json/--html/--out) could not be written (exit 3)
    ├── BrokersNotServingError    `--cutover now`: brokers not serving the stand-in in time (exit 3)
    └── JournalWriteError         the online journal could not be written (exit 3)

The exit codes are chosen in one table, `migrate/cli/exit_codes.py`, not here.
"""

from __future__ import annotations

__all__ = [
    "BadFlagError",
    "BrokersNotServingError",
    "BlockersFoundError",
    "CanaryError",
    "CutoverUnconfirmedError",
    "JournalWriteError",
    "MigrateError",
    "ReportWriteError",
    "SparkError",
    "TranslationError",
]


class MigrateError(Exception):
    """Root of every error raised by `migrate`."""


class BadFlagError(MigrateError):
    """A flag is missing, malformed or contradicts another; the message names the flag."""


class TranslationError(MigrateError):
    """A znode's content cannot be expressed as KRaft records (names the path)."""


class BlockersFoundError(MigrateError):
    """The pre-flight found blockers; the migration was not started."""


class SparkError(MigrateError):
    """The Spark session could not start (or reach --spark-master), or a Spark job failed.

    The message names the master and the file holding Spark's own log, which is kept out of the
    terminal.
    """


class CanaryError(MigrateError):
    """The canary (`--bootstrap-server`) cannot reach the brokers, create its topic, or get
    its requests served before the cutover; the message names the brokers and what failed."""


class BrokersNotServingError(MigrateError):
    """`--cutover now` with the stand-in: a broker ZooKeeper listed was still not registered
    with the stand-in and fetching from it when `--broker-wait` ran out. Nothing was fenced:
    ZooKeeper's controller keeps running the cluster; the message names the brokers."""


class ReportWriteError(MigrateError):
    """A report file could not be written after the work was done (disk full, I/O error).

    Report paths are probed before any work starts (`BadFlagError` then), so this only happens
    when the filesystem changes under a running command; the message names the flag and file.
    """


class JournalWriteError(MigrateError):
    """The online migration's journal could not be written (disk full, I/O error, read-only).

    The journal is the run's memory, so the run stops at once, as a crash there would: the
    message names the journal file, the errno, the phase the journal still holds and whether
    ZooKeeper was fenced (before the fence nothing in ZooKeeper was touched).
    """


class CutoverUnconfirmedError(MigrateError):
    """The cutover ran to its end, but what Kafka reports afterwards does not confirm a working
    cluster: brokers not registered at the fence, brokers not serving with the new controller,
    no controller claim, or the clients' window over `--max-window`. The message (and the
    report's `status`/`problems`) says what was seen and what to do."""
