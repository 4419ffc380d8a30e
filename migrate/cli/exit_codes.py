"""The one table from error class to exit code, read only by `migrate.cli`.

Exit codes are a contract (the exit-code table in the README): 0 ok; 1 blockers found or parity
differences; 2 bad flags or bad input data; 3 ZooKeeper or a voter directory unreachable,
unusable or locked; 70 an internal bug; 130 interrupted; 141 stdout closed by its reader;
143 terminated (SIGTERM, cleaned up as for Ctrl-C); 4 an online cutover that ran to its end but
that Kafka does not confirm (brokers unregistered or not serving, no claim, window over bound).
Every error class of the four packages gets its code here, by class, the way kazoo maps server
codes to exception classes in one `EXCEPTIONS` table: a class not listed takes the code of its
nearest listed base class, and an exception outside the four error trees is a bug (70). The
README's exit-code table is this table (a unit test compares them).

Why a table and not an attribute on each class: the same kind of failure must end every command
the same way (a damaged `meta.properties` is bad input, 2, in `inspect`, `verify` and `migrate`),
and that is only checkable when all the choices sit side by side.
"""

from __future__ import annotations

from migrate.errors import (
    BadFlagError,
    BlockersFoundError,
    BrokersNotServingError,
    CanaryError,
    CutoverUnconfirmedError,
    JournalWriteError,
    MigrateError,
    ReportWriteError,
    SparkError,
    TranslationError,
)
from verify.errors import ReplayError, UnknownRecordTypeError, VerifyError
from writers.errors import (
    LogCorruptionError,
    SchemaError,
    VoterFileFormatError,
    VoterStateError,
    VoterUnavailableError,
    WriterError,
)
from zkreader.errors import (
    BadConnectStringError,
    ZkReaderError,
    ZkUnreachableError,
    ZnodeFormatError,
)

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_BROKEN_PIPE",
    "EXIT_CODES",
    "EXIT_FINDINGS",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_TERMINATED",
    "EXIT_OK",
    "EXIT_UNCONFIRMED",
    "EXIT_UNREACHABLE",
    "Terminated",
    "ending_exit_code",
    "exit_code_for",
]

EXIT_OK = 0
EXIT_FINDINGS = 1  # blockers (plan/migrate) or parity differences (verify)
EXIT_BAD_INPUT = 2  # a bad flag, or malformed data in ZooKeeper or in a voter's files
EXIT_UNREACHABLE = 3  # ZooKeeper or a voter directory cannot be reached, written or locked
EXIT_UNCONFIRMED = 4  # the cutover ran, but Kafka does not confirm a serving cluster after it
EXIT_INTERNAL = 70  # a bug in zk2kraft (sysexits' EX_SOFTWARE), never confused with findings
EXIT_INTERRUPTED = 130  # Ctrl-C / SIGINT
EXIT_TERMINATED = 143  # SIGTERM (128 + 15): cleaned up exactly as after Ctrl-C
EXIT_BROKEN_PIPE = 141  # stdout's reader went away (e.g. `| head`)

EXIT_CODES: dict[type[BaseException], int] = {
    # findings: the input is fine, but the tool refuses (and says why)
    BlockersFoundError: EXIT_FINDINGS,
    VoterStateError: EXIT_FINDINGS,  # a voter already holds another log/cluster/node
    # bad flags or bad data
    MigrateError: EXIT_BAD_INPUT,
    BadFlagError: EXIT_BAD_INPUT,
    TranslationError: EXIT_BAD_INPUT,
    ZnodeFormatError: EXIT_BAD_INPUT,
    BadConnectStringError: EXIT_BAD_INPUT,
    WriterError: EXIT_BAD_INPUT,
    SchemaError: EXIT_BAD_INPUT,
    LogCorruptionError: EXIT_BAD_INPUT,
    VoterFileFormatError: EXIT_BAD_INPUT,  # a damaged meta.properties / quorum-state / ...
    VerifyError: EXIT_BAD_INPUT,
    ReplayError: EXIT_BAD_INPUT,
    UnknownRecordTypeError: EXIT_BAD_INPUT,
    # something cannot be reached, written or locked
    ZkReaderError: EXIT_UNREACHABLE,
    ZkUnreachableError: EXIT_UNREACHABLE,
    VoterUnavailableError: EXIT_UNREACHABLE,
    SparkError: EXIT_UNREACHABLE,
    CanaryError: EXIT_UNREACHABLE,  # --bootstrap-server's brokers
    BrokersNotServingError: EXIT_UNREACHABLE,  # brokers not serving the stand-in, nothing fenced
    ReportWriteError: EXIT_UNREACHABLE,
    JournalWriteError: EXIT_UNREACHABLE,  # the online journal (the run stops as at a crash)
    # the cutover happened: not a refusal, not unreachable input, but no confirmed success
    CutoverUnconfirmedError: EXIT_UNCONFIRMED,
}
"""Error class -> exit code. Lookup walks the exception's MRO, so subclasses inherit."""

ERROR_ROOTS: tuple[type[Exception], ...] = (MigrateError, ZkReaderError, WriterError, VerifyError)
"""The four packages' error roots: anything else reaching the CLI is a bug."""


def exit_code_for(exc: BaseException) -> int | None:
    """The exit code of one of our errors, or None for anything else (a bug: exit 70).

    Args:
        exc: the exception that ended a command.
    """
    for cls in type(exc).__mro__:
        code = EXIT_CODES.get(cls)
        if code is not None:
            return code
    return None


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread as a KeyboardInterrupt so that every cleanup Ctrl-C
    runs (staging copies removed, locks released, Spark stopped) runs for it too."""


def ending_exit_code(exc: BaseException) -> int:
    """The exit code a command ended by `exc` exits with: SIGTERM 143, Ctrl-C 130, a closed
    stdout 141, one of our errors its code in `EXIT_CODES`, anything else 70 (a bug). The CLI
    and the report a failed run writes both take it from here, so they cannot disagree.

    Args:
        exc: the exception that ended a command.
    """
    if isinstance(exc, Terminated):
        return EXIT_TERMINATED
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    if isinstance(exc, BrokenPipeError):
        return EXIT_BROKEN_PIPE
    code = exit_code_for(exc)
    return EXIT_INTERNAL if code is None else code
