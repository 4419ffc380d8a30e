"""The `zk2kraft` command line: the top-level parser, the command table, errors to exit codes.

This module is the only place that turns an exception into an exit code, through the one table
in `migrate/cli/exit_codes.py` (0 ok; 1 blockers or parity differences; 2 bad flags or bad input
data; 3 ZooKeeper or a voter directory unreachable, unwritable or locked; 70 a bug). Each
command lives in its own `migrate/cli/<name>.py` with an `add_parser(sub)` that registers its
subparser and a `run(args) -> int`; `_COMMANDS` names them. Their flags' shared groups are in
`migrate/cli/args.py`. Importing them starts no JVM: Spark starts only when a command runs it.
"""

from __future__ import annotations

import argparse
import faulthandler
import logging
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from migrate.cli import (
    inspect,
    migrate,
    plan,
    prepare_broker,
    rollback,
    snapshot,
    verify,
)
from migrate.cli.args import Parser, Subparsers
from migrate.cli.std_streams import (
    OutputGuard,
    StdoutUnwritable,
    guarded_std_streams,
    reserve_std_fds,
)
from migrate.flags.voters import parse_voter

__all__ = ["build_parser", "main", "parse_voter"]

from migrate.cli.exit_codes import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    Terminated,
    ending_exit_code,
)
from migrate.cli.internal_error import internal_error_report

_EPILOG = """\
which path fits which cluster (controller node ids must differ from every broker id):
  brokers running, controllers' disks on this host
      migrate --voter ID=DIR ... --cutover now|manual --on-cutover CMD
  brokers running, controllers on their own hosts
      migrate --standin ID@HOST:PORT=DIR --controller ID@HOST:PORT ... --cutover now|manual
  every broker stopped, to Kafka 3.9 or straight to 4.0 ... 4.4 (no way back once KRaft starts)
      migrate --offline [--target-kafka 4.1] --voter ID=DIR ...
  a copy only, ZooKeeper untouched (a rehearsal to verify and inspect)
      migrate --voter ID=DIR ... --cutover none
a typical online migration (the brokers keep serving):
  zk2kraft plan    --zookeeper zk1:2181/kafka --voter 3000=/mnt/c0/meta --html plan.html
  zk2kraft migrate --zookeeper zk1:2181/kafka --cutover now --on-cutover ./start-controllers.sh \\
                   --voter 3000=/mnt/c0/meta --voter 3001=/mnt/c1/meta --voter 3002=/mnt/c2/meta
  zk2kraft verify  --zookeeper zk1:2181/kafka --voter 3000=/mnt/c0/meta ... --json parity.json
  zk2kraft inspect /mnt/c0/meta --json | head
with every broker stopped (--offline; then, on each broker host, before its first KRaft start):
  zk2kraft prepare-broker --log-dirs /var/lib/kafka/data --zookeeper zk1:2181/kafka
many clusters' pre-flight in one Spark job (FILE: NAME CONNECT [FLAG ...] a line):
  zk2kraft plan --fleet clusters.txt --json fleet.json --html fleet.html

exit codes:
  0  success
  1  blockers found (plan/migrate) or parity differences (verify); plan --fleet: a
     cluster blocked (3 when one is unreachable); prepare-broker: partition directories
     Kafka would treat as stray (named; nothing written)
  2  bad flags, or malformed data in ZooKeeper or in a log (the message names the path/flag)
  3  ZooKeeper or a voter directory cannot be reached, written or locked; a report
     could not be written after the work was done (a --json/--html file, or stdout
     full or closed: the work is done, as stderr says)
  4  online migrate: the cutover ran, but Kafka does not confirm a serving cluster
     (the report's status is "unconfirmed"; "problems" says what was seen and what to do)
  70 internal error (a bug: stderr names where it was raised and the file that holds the
     traceback; please report it with that file)
  141 stdout closed early by its reader (e.g. `| head`); the work ran to its end
     (a work that failed on its own keeps its code)
  130/143 interrupted by Ctrl-C / SIGTERM (both clean up: no staging copy is left behind);
     a SIGINT its parent ignores (nohup, `cmd &` in a script) stays ignored: use SIGTERM

secrets: pass digest/SASL passwords through the environment (ZK2KRAFT_ZK_DIGEST,
ZK2KRAFT_ZK_SASL_PASSWORD, ZK2KRAFT_PASSWORD_ENCODER_SECRET) to keep them out of `ps`.
SCRAM credentials, broker passwords and token data never appear in any output or report.
"""


def _version() -> str:
    """The installed package's version (pyproject.toml's, through its metadata)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("zk2kraft")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed: no package metadata)"


@dataclass(frozen=True)
class _Command:
    """One `zk2kraft` command: registers its subparser, then runs the parsed flags."""

    add_parser: Callable[[Subparsers], None]
    run: Callable[[argparse.Namespace], int]


# Every command, in the order `zk2kraft --help` lists them; the key is the subparser's name.
_COMMANDS: dict[str, _Command] = {
    "snapshot": _Command(snapshot.add_parser, snapshot.run),
    "plan": _Command(plan.add_parser, plan.run),
    "migrate": _Command(migrate.add_parser, migrate.run),
    "verify": _Command(verify.add_parser, verify.run),
    "rollback": _Command(rollback.add_parser, rollback.run),
    "prepare-broker": _Command(prepare_broker.add_parser, prepare_broker.run),
    "inspect": _Command(inspect.add_parser, inspect.run),
}


def build_parser() -> argparse.ArgumentParser:
    """Build the full `zk2kraft` parser (the command-line contract of the design)."""
    parser = Parser(
        prog="zk2kraft",
        description=(
            "Move a Kafka cluster's metadata from ZooKeeper into a KRaft controller quorum: "
            "read the tree, plan and dry-run, write the quorum's metadata log in Kafka's own "
            "format, verify parity, and measure the controller-unavailability window."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging")
    parser.add_argument("--version", action="version", version=f"zk2kraft {_version()}",
                        help="print zk2kraft's version (the installed package's) and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True

    for command in _COMMANDS.values():
        command.add_parser(sub)
    return parser


def _configure_logging(verbose: int) -> None:
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    fmt = "%(levelname)s %(name)s: %(message)s"
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(fmt))
    # znode payloads (SCRAM salts/keys, encrypted passwords, token data) never reach stderr,
    # whatever the verbosity: kazoo's DEBUG records are rewritten, py4j's dropped (design I7)
    from zkreader import install_kazoo_redaction

    handler.addFilter(install_kazoo_redaction())
    logging.basicConfig(level=level, handlers=[handler])


def _on_sigterm(signum: int, frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second TERM must not cut the cleanup
    raise Terminated


def _dump_threads_on_sigquit() -> None:
    """`kill -QUIT <pid>` prints every thread's stack to stderr and the run goes on, as a JVM's
    thread dump does: where a run waits, seen without stopping it. Written by the interpreter
    itself, so it works while the main thread is stuck in a call; names code, never data."""
    try:
        faulthandler.register(signal.SIGQUIT, file=sys.__stderr__ or sys.stderr,
                              all_threads=True)
    except (AttributeError, OSError, ValueError, RuntimeError):
        pass  # no stderr to write to (a run started with fd 2 closed): keep the default


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `zk2kraft` console script; returns the process exit code."""
    reserve_std_fds()
    args = _parse(argv)
    if isinstance(args, int):
        return args
    _configure_logging(args.verbose)
    command = _COMMANDS[args.command]
    in_main_thread = threading.current_thread() is threading.main_thread()
    if in_main_thread and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # Python keeps a SIGINT its parent ignores (nohup, a script's `cmd &`), and so do we:
        # that parent chose that Ctrl-C at the terminal is not for this process. SIGTERM still
        # stops the run with the same cleanup (docs/design/cli.md, "Signals").
        logging.getLogger(__name__).info(
            "SIGINT is ignored (inherited from the parent): Ctrl-C will not stop this run; "
            "SIGTERM will, cleaning up as Ctrl-C does")
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if in_main_thread else None
    if in_main_thread:
        _dump_threads_on_sigquit()
    try:
        with guarded_std_streams() as guard:
            code = _run(command, args, guard)
        return guard.exit_code(code)
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)


def _parse(argv: Sequence[str] | None) -> argparse.Namespace | int:
    """The parsed flags, or the exit code where argparse ended the run itself: `--help` and
    `--version` (0), a usage error (2). Their text goes through the output guard too, so a help
    that could not be written (`--help >/dev/full`) ends 3 with a line on stderr, not 0."""
    with guarded_std_streams() as guard:
        try:
            return build_parser().parse_args(argv)
        except SystemExit as exc:
            parsed = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    code = guard.exit_code(parsed)
    if (said := guard.message()) is not None:
        try:
            sys.stderr.write(f"zk2kraft: {said}\n")
        except (OSError, ValueError, AttributeError):  # no stderr either: the code says it
            pass
    return code


def _run(command: _Command, args: argparse.Namespace, guard: OutputGuard) -> int:
    """Run one command, saying how it ended; the exit code comes from `ending_exit_code`, and
    for a stdout that failed under the work from `guard` (`OutputGuard.exit_code`)."""
    try:
        code = command.run(args)
    except StdoutUnwritable:  # inspect/snapshot stop at stdout's first failure: output is work
        code = EXIT_OK
    except (KeyboardInterrupt, Exception) as exc:
        exit_code = ending_exit_code(exc)
        if exit_code == EXIT_TERMINATED:
            sys.stderr.write("zk2kraft: terminated (SIGTERM); cleaned up\n")
        elif exit_code == EXIT_INTERRUPTED:
            sys.stderr.write("zk2kraft: interrupted\n")
        elif exit_code == EXIT_BROKEN_PIPE:
            # A pipe other than stdout (stdout's own failures never raise: `std_streams`).
            pass
        elif exit_code == EXIT_INTERNAL:
            # An unexpected exception is a bug, not a finding: exit 70 so scripts never read a
            # crash as "blockers found" (1). A migration cannot be re-run with -v to see it, so
            # the line names where it was raised and the whole traceback is kept in a file.
            logging.getLogger(__name__).debug("internal error", exc_info=True)
            sys.stderr.write(f"zk2kraft {args.command}: {internal_error_report(exc)}\n")
        else:
            sys.stderr.write(f"zk2kraft {args.command}: error: {exc}\n")
        return exit_code
    if (said := guard.message()) is not None:
        sys.stderr.write(f"zk2kraft {args.command}: {said}\n")
    return code

