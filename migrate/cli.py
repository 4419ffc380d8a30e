"""The `zk2kraft` command line: parse flags, call typed functions, turn errors into exit codes.

This module is the only place that turns an exception into an exit code, through the one table
in `migrate/_exit_codes.py` (0 ok; 1 blockers or parity differences; 2 bad flags or bad input
data; 3 ZooKeeper or a voter directory unreachable, unwritable or locked; 70 a bug). Each
command lives in its own `migrate/_cmd_<name>.py` with a `run(args) -> int`; they are imported
lazily so `--help` and `inspect` start fast and never start a JVM.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import math
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from migrate._standinargs import parse_controller, parse_standin
from migrate._voterargs import parse_voter

__all__ = ["build_parser", "main", "parse_voter"]

from migrate._exit_codes import (
    EXIT_BAD_INPUT,
    EXIT_BROKEN_PIPE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    exit_code_for,
)

_EPILOG = """\
a typical migration (controller node ids must differ from every broker id):
  zk2kraft plan    --zookeeper zk1:2181/kafka --voter 3000=/var/lib/kraft/meta --html plan.html
  zk2kraft migrate --zookeeper zk1:2181/kafka --cutover none \\
                   --voter 3000=/mnt/c0/meta --voter 3001=/mnt/c1/meta --voter 3002=/mnt/c2/meta
  zk2kraft verify  --zookeeper zk1:2181/kafka --voter 3000=/mnt/c0/meta ... --json parity.json
  zk2kraft inspect /mnt/c0/meta --json | head
with every broker stopped (--offline; then, on each broker host, before its first KRaft start):
  zk2kraft prepare-broker --log-dirs /var/lib/kafka/data

exit codes:
  0  success
  1  blockers found (plan/migrate) or parity differences (verify)
  2  bad flags, or malformed data in ZooKeeper or in a log (the message names the path/flag)
  3  ZooKeeper or a voter directory cannot be reached, written or locked; a report
     could not be written after the work was done
  4  online migrate: the cutover ran, but Kafka does not confirm a serving cluster
     (the report's status is "unconfirmed"; "problems" says what was seen and what to do)
  70 internal error (a bug: please report it with the traceback printed with -v)
  141 stdout closed early by its reader (e.g. `| head`)
  130/143 interrupted by Ctrl-C / SIGTERM (both clean up: no staging copy is left behind)

secrets: pass digest/SASL passwords through the environment (ZK2KRAFT_ZK_DIGEST,
ZK2KRAFT_ZK_SASL_PASSWORD, ZK2KRAFT_PASSWORD_ENCODER_SECRET) to keep them out of `ps`.
SCRAM credentials, broker passwords and token data never appear in any output or report.
"""

_SNAPSHOT_FORMAT = """\
output: one JSON object per line,
  {"kind": K, "path": "/znode/path", "data": {...}, "stat": {"czxid", "mzxid", "version",
   "ctime_ms", "mtime_ms", "ephemeral_owner", "num_children"}}
  kinds in order: cluster_id, controller, controller_epoch, feature, migration, broker, topic,
  partition_state, pending_deletion (stat null), config, acl, delegation_token,
  producer_id_block, log_dir_event. Paths are relative to the chroot. Redacted as
  "<redacted>": SCRAM credentials, password/JAAS/secret configs, encrypted values and
  delegation-token details.

"""


_VERIFY_EPILOG = """\
compared (kind: fields; a missing entity is field "<exists>"):
  broker: endPoints, rack, brokerEpoch (= czxid)      topic: topicId
  partition (<topic>-<p>): replicas, isr, leader, leaderEpoch, partitionEpoch,
      addingReplicas, removingReplicas, leaderRecoveryState
  topic_config / broker_config (<default> = cluster default): each key; passwords by presence
  client_quota (user=..,client-id=..,ip=..): each key    scram (<user>/<mechanism>): credential
      digest, never printed    acl: each binding    producer_ids: nextProducerId
  delegation_token: owner, requester, renewers, timestamps
  voter: a voter whose log differs from the first --voter's (first differing offset)
  transaction: a metadata transaction still open at the end of the log
--json (FILE or - for stdout, mode 0600): {"parity": bool, "differences": [{"kind", "key",
  "field", "zookeeper", "quorum"}], "checked": {kind: entities}, "provenance": {...}}

"""


class _Parser(argparse.ArgumentParser):
    """argparse that exits 2 with the flag named (argparse's own default is also 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"zk2kraft: error: {message}\n")
        raise SystemExit(EXIT_BAD_INPUT)


def _positive_float(value: str) -> float:
    try:
        result = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not math.isfinite(result):  # nan compares false with everything; inf never times out
        raise argparse.ArgumentTypeError(f"{value!r} must be a finite number of seconds")
    if result <= 0:
        raise argparse.ArgumentTypeError(f"{value!r} must be > 0")
    return result


def _non_negative_int(value: str) -> int:
    try:
        result = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an integer") from None
    if result < 0:
        raise argparse.ArgumentTypeError(f"{value!r} must be >= 0")
    return result


def _add_zookeeper(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("ZooKeeper connection")
    g.add_argument(
        "--zookeeper",
        required=True,
        metavar="CONNECT",
        help="Kafka's zookeeper.connect: host:port[,host:port...][/chroot]",
    )
    g.add_argument(
        "--zk-timeout",
        type=_positive_float,
        default=15.0,
        metavar="SECONDS",
        help="give up with exit 3 if no session within this time (default 15)",
    )
    g.add_argument(
        "--zk-digest",
        metavar="USER:PASSWORD",
        default=os.environ.get("ZK2KRAFT_ZK_DIGEST"),
        help="digest auth (or env ZK2KRAFT_ZK_DIGEST)",
    )
    g.add_argument("--zk-sasl", action="store_true", help="authenticate with SASL")
    g.add_argument("--zk-sasl-mechanism", default="DIGEST-MD5", help="SASL mechanism")
    g.add_argument("--zk-sasl-username", metavar="USER")
    g.add_argument(
        "--zk-sasl-password",
        metavar="PASSWORD",
        default=os.environ.get("ZK2KRAFT_ZK_SASL_PASSWORD"),
        help="(or env ZK2KRAFT_ZK_SASL_PASSWORD)",
    )
    g.add_argument("--zk-tls", action="store_true", help="connect to ZooKeeper's secure port")
    g.add_argument("--zk-tls-ca", metavar="PEM")
    g.add_argument("--zk-tls-cert", metavar="PEM")
    g.add_argument("--zk-tls-key", metavar="PEM")
    g.add_argument("--zk-tls-no-verify", action="store_true", help="skip hostname verification")


def _add_voters(p: argparse.ArgumentParser, *, required: bool) -> None:
    p.add_argument(
        "--voter",
        dest="voters",
        action="append",
        type=parse_voter,
        required=required,
        default=None,
        metavar="ID=DIR",
        help="a KRaft controller's node id and its metadata.log.dir (repeat for each voter)",
    )


def _add_standin(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "stand-in transport (instead of --voter; --cutover now|manual)",
        "zk2kraft takes one voter id of the controllers' static quorum and leads the running "
        "controllers (started with zookeeper.metadata.migration.enable=true and a long "
        "controller.quorum.election.timeout.ms, e.g. 30000, so that it wins the first "
        "election): they replicate the pre-copy, the mirror and the drain onto their own disks, "
        "and at cutover it resigns (EndQuorumEpoch) so that a warm controller leads. Use it "
        "when the controllers' disks are not on this host; use --voter ID=DIR when they are. "
        "Example: --standin 3000@10.0.0.5:9093=/var/lib/zk2kraft/meta "
        "--controller 3001@c1:9093 --controller 3002@c2:9093")
    g.add_argument("--standin", type=parse_standin, metavar="ID@HOST:PORT=DIR",
                   help="the voter id zk2kraft takes, the address it listens on (its entry in "
                   "controller.quorum.voters) and its local metadata.log.dir")
    g.add_argument("--controller", dest="controllers", action="append", type=parse_controller,
                   metavar="ID@HOST:PORT",
                   help="a running controller that follows the stand-in (repeat for each)")
    g.add_argument("--quorum-voters", metavar="ID@HOST:PORT,...",
                   help="instead of --controller: the controllers' controller.quorum.voters "
                   "string (it must name the stand-in with the --standin address)")
    g.add_argument("--controller-config", metavar="FILE",
                   help="the controller listener's security in Kafka's property names: "
                   "security.protocol (SSL, SASL_PLAINTEXT, SASL_SSL), ssl.keystore.location / "
                   "ssl.truststore.location (PEM), ssl.key.password, ssl.client.auth, "
                   "sasl.mechanism=PLAIN, sasl.jaas.config (username/password, user_NAME)")


def _add_output(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", metavar="FILE", help="also write the result as JSON (mode 0600)")
    p.add_argument("--quiet", action="store_true", help="no progress bars or tables")


def _metadata_version(value: str) -> object:
    """The argparse type of `--metadata-version`: the one place the flag is parsed.

    Every command then passes the parsed `MetadataVersion` on (plan, migrate, the translator,
    Spark tasks). Imported lazily so `--help` stays fast.
    """
    from migrate.errors import BadFlagError
    from migrate.translate import parse_target_version

    try:
        return parse_target_version(value)
    except BadFlagError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--metadata-version ")) from None


def _add_metadata_version(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--metadata-version",
        type=_metadata_version,
        default=None,
        metavar="V",
        help="KRaft metadata.version to write: 3.4-IV0 ... 3.9-IV0 (default 3.9-IV0); with "
        "--target-kafka 4.x also 4.0-IV0 ... 4.1-IV1 (default 4.0-IV3, which Kafka 4.0 and "
        "4.1 both run)",
    )


def _add_offline(p: argparse.ArgumentParser, *, target: bool) -> None:
    g = p.add_argument_group("offline migration (every broker stopped)")
    g.add_argument(
        "--offline",
        action="store_true",
        help="every broker is stopped and the cluster never goes back to ZooKeeper: refuse "
        "if a broker is still registered or /controller is held; read once, touch nothing in "
        "ZooKeeper; the log is final (ZkMigrationState POST_MIGRATION) and holds no broker "
        "registrations (each broker registers itself when it starts in KRaft mode)",
    )
    if target:
        g.add_argument(
            "--target-kafka",
            choices=["3.9", "4.x"],
            default="3.9",
            help="the Kafka release the KRaft controllers and brokers will run (default 3.9); "
            "4.x (ZooKeeper-free Kafka 4.0/4.1) needs --offline",
        )


def build_parser() -> argparse.ArgumentParser:
    """Build the full `zk2kraft` parser (the command-line contract of the design)."""
    parser = _Parser(
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
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser(
        "snapshot",
        help="read-only dump of the Kafka tree as JSON lines (secrets redacted)",
        description="Read the whole Kafka tree from ZooKeeper (read-only) and print one JSON "
        "object per znode-derived entity. SCRAM credentials and passwords are redacted.",
        epilog=_SNAPSHOT_FORMAT + _EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_zookeeper(p)
    p.add_argument("--out", metavar="FILE", help="write to FILE (mode 0600) instead of stdout")
    p.add_argument("--quiet", action="store_true", help="no progress bars")

    p = sub.add_parser(
        "plan",
        help="pre-flight checks and dry-run diff (writes nothing)",
        description="Pre-flight: find what would block or endanger a migration (blockers, "
        "warnings), count the records `migrate` would write and, with --voter, diff voters "
        "that already hold a log against ZooKeeper. With --standin and --controller (or "
        "--quorum-voters), as migrate takes them, also print the operator's sequence: the "
        "properties each controller and each broker (from /brokers/ids) must run with, and "
        "Kafka's procedure as numbered steps with the rollback of each. Writes nothing "
        "anywhere but the reports.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_zookeeper(p)
    _add_voters(p, required=False)
    _add_standin(p)
    p.add_argument("--controller-listener-name", default="CONTROLLER", metavar="NAME",
                   help="with --standin: the controllers' controller.listener.names, as the "
                   "printed properties use it (default CONTROLLER)")
    _add_metadata_version(p)
    _add_offline(p, target=True)
    _add_output(p)
    p.add_argument("--html", metavar="FILE", help="write a self-contained HTML report (0600)")
    p.add_argument(
        "--password-encoder-secret",
        metavar="SECRET",
        default=os.environ.get("ZK2KRAFT_PASSWORD_ENCODER_SECRET"),
        help="brokers' password.encoder.secret, to decode encrypted dynamic broker passwords "
        "(or env ZK2KRAFT_PASSWORD_ENCODER_SECRET)",
    )

    p = sub.add_parser(
        "migrate",
        help="copy the metadata into the voters' logs (and, later, cut over)",
        description="Read ZooKeeper, translate to KRaft records and write the complete "
        "metadata log into every --voter directory. With --cutover none nothing is written "
        "to ZooKeeper. Refuses on pre-flight blockers (exit 1).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_zookeeper(p)
    _add_voters(p, required=False)
    _add_standin(p)
    _add_metadata_version(p)
    _add_offline(p, target=True)
    _add_output(p)
    p.add_argument("--cutover", choices=["none", "now", "manual"], default="none",
                   help="none: copy only, ZooKeeper untouched (default); now: copy into the live "
                   "logs, mirror changes, fence ZooKeeper's controller as soon as caught up and "
                   "hand over; manual: the same, cutting over on Enter or SIGUSR1 "
                   "(needs --metadata-version 3.6-IV1 or later)")
    p.add_argument("--on-cutover", metavar="CMD",
                   help="shell command run after /migration is written, to start the KRaft "
                   "controllers (must be safe to run again: a resumed run re-runs it)")
    p.add_argument("--journal", metavar="DIR",
                   help="where the online run's journal lives (default: "
                   "<parent of the first voter dir>/.zk2kraft-journal); a re-run resumes from it")
    p.add_argument("--handoff-timeout", type=float, default=120.0, metavar="S",
                   help="how long to wait for a KRaft controller to claim /controller after "
                   "--on-cutover (t2; default 120)")
    p.add_argument("--broker-wait", type=float, default=60.0, metavar="S",
                   help="with --standin: how long the cutover waits for every broker in "
                   "/brokers/ids to register with the stand-in and be unfenced, as Kafka's "
                   "WAIT_FOR_BROKERS does (brokers in migration mode with "
                   "controller.quorum.voters do so on their own); after that it cuts over "
                   "with a warning and they register with the next controller (default 60; "
                   "0: do not wait)")
    p.add_argument("--bootstrap-server", metavar="HOST:PORT[,HOST:PORT]",
                   help="run the canary against these brokers during the online migration: "
                   "controller-bound requests every 50 ms and an acks=all produce/consume "
                   "loop; the report gains window_ms.observed and the producer's stall")
    p.add_argument("--max-window", type=float, default=None, metavar="S",
                   help="with --bootstrap-server: the longest window (seconds) the clients may "
                   "see (the canary's window_ms.observed); over it the run ends with exit 4 "
                   "and WINDOW_OVER_BOUND in the report")
    p.add_argument("--command-config", metavar="FILE",
                   help="the canary's client properties (Kafka's Java client file: "
                   "security.protocol, sasl.*, ssl.* with PEM or PKCS#12 stores)")
    p.add_argument("--controller-log", dest="controller_logs", action="append", metavar="FILE",
                   help="the server log of the controller that takes over (repeat for each "
                   "candidate): its migration-driver lines give window_ms.parts' reconcile and "
                   "broker_rpcs (zk2kraft follows it until DUAL_WRITE or --handoff-timeout)")
    p.add_argument("--html", metavar="FILE",
                   help="with --cutover now|manual: also write a self-contained HTML report "
                   "with the window's parts as a stacked bar (mode 0600)")
    p.add_argument("--spark-master", default="auto", metavar="auto|in-process|URL",
                   help="engine of the bulk pipeline: 'auto' (default) runs Spark local[*] "
                   "for big clusters and in-process below a measured size; 'in-process' never "
                   "starts Spark; any other value is a Spark master URL (local[4], spark://...)")
    p.add_argument(
        "--password-encoder-secret",
        metavar="SECRET",
        default=os.environ.get("ZK2KRAFT_PASSWORD_ENCODER_SECRET"),
        help="brokers' password.encoder.secret, to decode encrypted dynamic broker passwords "
        "(or env ZK2KRAFT_PASSWORD_ENCODER_SECRET); without it they block the migration",
    )
    p.add_argument("--allow-pending-log-dir-events", action="store_true",
                   help="override the blocker for unprocessed /log_dir_event_notification events")

    p = sub.add_parser(
        "verify",
        help="prove parity between the voters' logs and ZooKeeper",
        description="Replay the voter log into a metadata image, read ZooKeeper afresh and "
        "compare field by field. Exit 1 on any difference.",
        epilog=_VERIFY_EPILOG + _EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_zookeeper(p)
    _add_voters(p, required=True)
    p.add_argument("--quorum-voters", metavar="ID@HOST:PORT,...",
                   help="the controllers' controller.quorum.voters, when --voter names only "
                   "some of them (after a --standin migration the controllers' disks are on "
                   "their own hosts): quorum-state's voter set is checked against it")
    _add_offline(p, target=False)
    _add_output(p)
    p.add_argument("--spark-master", default=None, metavar="URL",
                   help="run the parity joins on Spark (default: in-process)")

    p = sub.add_parser(
        "rollback",
        help="undo an online cutover before finalisation (ZooKeeper's controller leads again)",
        description="Remove zk2kraft's (or a KRaft controller's) /controller claim and "
        "/migration in one multi-op checking /controller_epoch, and lift /controller_epoch "
        "above every controller_epoch in the partition state znodes (KAFKA-20488). Refuses "
        "while a voter's .lock is held (exit 3) or after finalisation (exit 1).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_zookeeper(p)
    _add_voters(p, required=True)
    _add_output(p)
    p.add_argument("--journal", metavar="DIR",
                   help="the online run's journal dir, moved aside (default: beside the voters)")

    p = sub.add_parser(
        "prepare-broker",
        help="on each stopped broker host, after migrate --offline: give its first log dir "
        "the directory.id the log names",
        description="Run on each stopped broker host before its first start in KRaft mode "
        "after `migrate --offline`: gives the broker's first log dir the directory.id that "
        "the migrated log names for its replicas (derived from the dir's own cluster.id and "
        "broker.id), so the broker has no replica directory to report at start (without it: "
        "STALE_BROKER_EPOCH errors until its metadata catches up). Idempotent; never changes "
        "an existing directory.id; refuses while the broker runs (its .lock is held: exit 3).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--log-dirs", required=True, metavar="DIR[,DIR...]",
                   help="the broker's log.dirs, in the same order (the first one gets the id)")
    p.add_argument("--dry-run", action="store_true", help="say what would change; write nothing")

    p = sub.add_parser(
        "inspect",
        help="decode a voter dir, log dir, .log or .checkpoint",
        description="Decode and validate a metadata log: every CRC, offset and record.\n"
        "With --json, one object per record, {\"offset\",\"type\",\"version\",\"data\"}, "
        "named\nexactly as kafka-dump-log --cluster-metadata-decoder prints them (snapshots "
        "first,\nthen the log segments). Writes nothing.\n\n"
        "inspect's exit codes: 0 valid; 1 valid, but the log ends inside an open metadata\n"
        "transaction (a controller taking over would abort it and drop its records); 2 PATH\n"
        "missing, not a metadata log, or damaged (the message names file, byte position and\n"
        "offset; everything before the damage is printed first); 3 PATH exists but cannot be\n"
        "read (permissions, I/O error).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", metavar="PATH", help="voter dir, log dir, .log or .checkpoint file")
    p.add_argument("--json", action="store_true", help="JSON lines, one record per line")
    p.add_argument("--max-records", type=_non_negative_int, default=200, metavar="N",
                   help="records listed in the readable view (default 200; counts cover all)")
    p.add_argument("--unredacted", action="store_true",
                   help="print SCRAM salts/keys, token details and sensitive config values "
                   "as stored (default: redacted); for byte-exact comparison with kafka-dump-log")
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


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread as a KeyboardInterrupt so that every cleanup Ctrl-C
    runs (staging copies removed, locks released, Spark stopped) runs for it too."""


def _on_sigterm(signum: int, frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second TERM must not cut the cleanup
    raise _Terminated


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `zk2kraft` console script; returns the process exit code."""
    args = build_parser().parse_args(argv)
    _configure_logging(args.verbose)
    module = importlib.import_module(f"migrate._cmd_{args.command.replace('-', '_')}")
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if in_main_thread else None
    try:
        return _run(module, args)
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)


def _run(module: Any, args: argparse.Namespace) -> int:
    """Run one command, turning how it ended into the exit code (the one place that does)."""
    try:
        code: int = module.run(args)
    except KeyboardInterrupt as exc:
        if isinstance(exc, _Terminated):
            sys.stderr.write("zk2kraft: terminated (SIGTERM); cleaned up\n")
            return EXIT_TERMINATED
        sys.stderr.write("zk2kraft: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader of stdout went away (`zk2kraft inspect --json | head`): not a bug. Point
        # stdout at /dev/null so the interpreter's final flush stays quiet; 141 = 128 + SIGPIPE,
        # what a shell reports for a command killed by a closed pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except Exception as exc:  # our errors have an exit code in the table; anything else is a bug
        exit_code = exit_code_for(exc)
        if exit_code is None:
            # An unexpected exception is a bug, not a finding: exit 70 so scripts never read a
            # crash as "blockers found" (1). The traceback goes to stderr with -v.
            logging.getLogger(__name__).debug("internal error", exc_info=True)
            sys.stderr.write(
                f"zk2kraft {args.command}: internal error: {type(exc).__name__}: {exc}"
                " (run with -v for the traceback)\n"
            )
            return EXIT_INTERNAL
        sys.stderr.write(f"zk2kraft {args.command}: error: {exc}\n")
        return exit_code
    return code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
