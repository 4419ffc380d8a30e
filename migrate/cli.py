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
import re
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
    Terminated,
    ending_exit_code,
)

_EPILOG = """\
which path fits which cluster (controller node ids must differ from every broker id):
  brokers running, controllers' disks on this host
      migrate --voter ID=DIR ... --cutover now|manual --on-cutover CMD
  brokers running, controllers on their own hosts
      migrate --standin ID@HOST:PORT=DIR --controller ID@HOST:PORT ... --cutover now|manual
  every broker stopped, to Kafka 3.9 or straight to 4.0/4.1 (no way back once KRaft starts)
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
  130/143 interrupted by Ctrl-C / SIGTERM (both clean up: no staging copy is left behind);
     a SIGINT its parent ignores (nohup, `cmd &` in a script) stays ignored: use SIGTERM

secrets: pass digest/SASL passwords through the environment (ZK2KRAFT_ZK_DIGEST,
ZK2KRAFT_ZK_SASL_PASSWORD, ZK2KRAFT_PASSWORD_ENCODER_SECRET) to keep them out of `ps`.
SCRAM credentials, broker passwords and token data never appear in any output or report.
"""

_SUB_EPILOG = """\
exit codes, secrets and which path fits which cluster: zk2kraft --help
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


_MIGRATE_EPILOG = """\
--cutover none copies and stops there: ZooKeeper and its controller run on untouched, so the copy
is a rehearsal (verify it, inspect it). A running cluster moves with --cutover now or manual: the
same copy into the live logs, then the mirror, the fence and the handoff to the KRaft controllers
that --on-cutover starts (or, with --standin, to the running controllers). Every broker stopped:
--offline.

""" + _SUB_EPILOG

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
  voter_files: meta.properties, quorum-state, partition.metadata a controller would refuse
  transaction: a metadata transaction still open at the end of the log
three classes; only differences fail (exit 1):
  difference        the two sides disagree as no healthy cluster does
  changed by Kafka  Kafka's own change since the migration, in dual-write: a producer-id
                    block a KRaft controller allocated (ZooKeeper {broker -1, block_start =
                    the log's nextProducerId}, one block ahead); a broker registered through
                    KRaft that /brokers/ids no longer lists (rolled to KRaft, or stopped)
  not checked       a quorum-state listing more voters than the --voter ids: pass
                    --quorum-voters
when: after a bulk copy; in the mirror and in dual-write on a controller's metadata.log.dir;
  after the brokers rolled to KRaft. Not after finalising (ZooKeeper is no longer written).
--json (FILE or - for stdout, mode 0600): {"parity": bool, "differences": [{"kind", "key",
  "field", "zookeeper", "quorum"}], "changed_by_kafka": [... "reason"], "not_checked":
  [... "reason"], "checked": {kind: entities}, "provenance": {...}}

"""


_DASH_VALUE = re.compile(r"^-\d+[=@]")  # `-1=DIR`, `-1@HOST:PORT=DIR`: values, never options


class _Parser(argparse.ArgumentParser):
    """argparse that exits 2 with the flag named (argparse's own default is also 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"zk2kraft: error: {message}\n")
        raise SystemExit(EXIT_BAD_INPUT)

    def _parse_optional(self, arg_string: str) -> Any:
        # `-1=DIR` is a value (a --voter with a negative id), not an unknown option: argparse
        # would say "expected one argument"; as a value, --voter's own check names the id
        if _DASH_VALUE.match(arg_string):
            return None
        return super()._parse_optional(arg_string)


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


def _version() -> str:
    """The installed package's version (pyproject.toml's, through its metadata)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("zk2kraft")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed: no package metadata)"


def _verify_spark_master(value: str) -> str:
    """verify's `--spark-master`: migrate's values less 'auto' (verify has no size rule)."""
    if value == "auto":
        raise argparse.ArgumentTypeError(
            "'auto' is migrate's; verify takes 'in-process' or a Spark master URL")
    return value


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
    g.add_argument("--zk-tls-ca", metavar="PEM",
                   help="with --zk-tls: CA certificate(s) that signed ZooKeeper's (default: "
                   "the system's trust store)")
    g.add_argument("--zk-tls-cert", metavar="PEM",
                   help="with --zk-tls: this client's certificate, when ZooKeeper wants one "
                   "(ssl.clientAuth)")
    g.add_argument("--zk-tls-key", metavar="PEM",
                   help="with --zk-tls: the private key of --zk-tls-cert (unencrypted PEM)")
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
        "--target-kafka 4.0 also 4.0-IV0 ... 4.0-IV3, with 4.1 or 4.x also up to 4.1-IV1 "
        "(default 4.0-IV3, which Kafka 4.0 and 4.1 both run)",
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
        from migrate.translate import TARGETS

        g.add_argument(
            "--target-kafka",
            choices=TARGETS,
            default="3.9",
            help="the Kafka release the KRaft controllers and brokers will run (default 3.9); "
            "4.0, 4.1 or 4.x (either of them; ZooKeeper-free Kafka) need --offline and write "
            "metadata.version 4.0-IV3 unless --metadata-version says otherwise (4.0 runs up to "
            "4.0-IV3, 4.1 and 4.x up to 4.1-IV1)",
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
    parser.add_argument("--version", action="version", version=f"zk2kraft {_version()}",
                        help="print zk2kraft's version (the installed package's) and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser(
        "snapshot",
        help="read-only dump of the Kafka tree as JSON lines (secrets redacted)",
        description="Read the whole Kafka tree from ZooKeeper (read-only) and print one JSON "
        "object per znode-derived entity. SCRAM credentials and passwords are redacted.",
        epilog=_SNAPSHOT_FORMAT + _SUB_EPILOG,
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
        "--quorum-voters), or with --voter (online, or with --offline), as migrate takes "
        "them, also print the operator's sequence of that path: the properties each "
        "controller and each broker must run with, and the procedure as numbered steps with "
        "the rollback of each (the runbooks in docs/runbooks/ are this text). --offline "
        "judges a stopped cluster without --voter; --voter adds the sequence. Writes nothing "
        "anywhere but the reports.",
        epilog=_SUB_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_zookeeper(p)
    _add_voters(p, required=False)
    _add_standin(p)
    p.add_argument("--controller-listener-name", default="CONTROLLER", metavar="NAME",
                   help="the controllers' controller.listener.names, as the printed sequence "
                   "uses it (default CONTROLLER)")
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
        help="copy the metadata into the KRaft controllers' logs and, with --cutover now|manual, "
        "cut over while the brokers run",
        description="Read ZooKeeper, translate to KRaft records and write the complete "
        "metadata log into every --voter directory (or, with --standin, through the running "
        "controllers). With --cutover none nothing is written to ZooKeeper; with now|manual "
        "changes are mirrored until ZooKeeper's controller is fenced and the KRaft controllers "
        "take over. Refuses on pre-flight blockers (exit 1).",
        epilog=_MIGRATE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_zookeeper(p)
    _add_voters(p, required=False)
    _add_standin(p)
    _add_metadata_version(p)
    _add_offline(p, target=True)
    _add_output(p)
    p.add_argument("--cutover", choices=["none", "now", "manual"], default="none",
                   help="none: copy only, ZooKeeper untouched (default); now and manual need "
                   "--metadata-version 3.6-IV1 or later (the default 3.9-IV0 is): now copies "
                   "into the live logs, mirrors changes, fences ZooKeeper's controller as soon "
                   "as caught up and hands over; manual does the same, cutting over on Enter "
                   "or SIGUSR1")
    p.add_argument("--on-cutover", metavar="CMD",
                   help="shell command run after /migration is written, to start the KRaft "
                   "controllers (must be safe to run again: a resumed run re-runs it)")
    p.add_argument("--journal", metavar="DIR",
                   help="where the online run's journal lives (default: "
                   "<parent of the first voter dir>/.zk2kraft-journal, 0700, on the first "
                   "voter's filesystem: give a DIR on another filesystem to survive that disk "
                   "filling); a re-run and rollback find it with the same flags. A journal "
                   "that cannot be written stops the run (exit 3; before the fence ZooKeeper "
                   "is untouched)")
    p.add_argument("--handoff-timeout", type=float, default=120.0, metavar="S",
                   help="how long to wait for a KRaft controller to claim /controller after "
                   "--on-cutover (t2; default 120)")
    p.add_argument("--broker-wait", type=float, default=None, metavar="S",
                   help="with --standin: how long the cutover waits for every broker in "
                   "/brokers/ids to register with the stand-in and be unfenced, as Kafka's "
                   "WAIT_FOR_BROKERS does (brokers in migration mode with "
                   "controller.quorum.voters do so on their own); after that it cuts over "
                   "with a warning and they register with the next controller (default 60; "
                   "0: do not wait; refused without --standin)")
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
                   help="where the bulk copy's translation and encoding run: 'auto' (default) "
                   "on Spark local[*] for big clusters and in-process below a measured size; "
                   "'in-process' never starts Spark; a Spark master URL (local[4], spark://...) "
                   "runs them on that Spark")
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
        epilog=_VERIFY_EPILOG + _SUB_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_zookeeper(p)
    _add_voters(p, required=True)
    p.add_argument("--quorum-voters", metavar="ID@HOST:PORT,...",
                   help="the controllers' controller.quorum.voters, when --voter names only "
                   "some of them (after a --standin migration the controllers' disks are on "
                   "their own hosts): quorum-state's voter set is checked against it; without "
                   "it a quorum-state listing more voters than the --voter ids is 'not "
                   "checked'")
    _add_offline(p, target=False)
    _add_output(p)
    p.add_argument("--spark-master", default="in-process", metavar="in-process|URL",
                   type=_verify_spark_master,
                   help="where the parity joins run (default in-process): 'in-process' never "
                   "starts Spark; a Spark master URL (local[4], spark://...) runs them on that "
                   "Spark, as for migrate")

    p = sub.add_parser(
        "rollback",
        help="undo an online cutover before finalisation (ZooKeeper's controller leads again)",
        description="Remove the /controller claim the journal says this migration wrote (or "
        "the claim of the KRaft controller that took over from it) and /migration in one "
        "multi-op checking /controller_epoch, and lift /controller_epoch above every "
        "controller_epoch in the partition state znodes (KAFKA-20488). Refuses while a "
        "voter's .lock is held (exit 3), after finalisation (exit 1), or when /controller "
        "holds a persistent claim the journal does not vouch for (exit 1). A run that never "
        "fenced ZooKeeper has nothing to roll back: its journal is kept, and the same "
        "migrate resumes it.",
        epilog=_SUB_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_zookeeper(p)
    _add_voters(p, required=True)
    _add_output(p)
    p.add_argument("--journal", metavar="DIR",
                   help="the online run's journal dir (default: <parent of the first voter "
                   "dir>/.zk2kraft-journal): its claims decide what may be removed; moved "
                   "aside once rolled back")

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
        epilog=_SUB_EPILOG,
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
        epilog=_SUB_EPILOG,
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


def _on_sigterm(signum: int, frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second TERM must not cut the cleanup
    raise Terminated


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `zk2kraft` console script; returns the process exit code."""
    args = build_parser().parse_args(argv)
    _configure_logging(args.verbose)
    module = importlib.import_module(f"migrate._cmd_{args.command.replace('-', '_')}")
    in_main_thread = threading.current_thread() is threading.main_thread()
    if in_main_thread and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # Python keeps a SIGINT its parent ignores (nohup, a script's `cmd &`), and so do we:
        # that parent chose that Ctrl-C at the terminal is not for this process. SIGTERM still
        # stops the run with the same cleanup (docs/design.md, "Signals").
        logging.getLogger(__name__).info(
            "SIGINT is ignored (inherited from the parent): Ctrl-C will not stop this run; "
            "SIGTERM will, cleaning up as Ctrl-C does")
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if in_main_thread else None
    try:
        return _run(module, args)
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)


def _run(module: Any, args: argparse.Namespace) -> int:
    """Run one command, saying how it ended; the exit code comes from `ending_exit_code`."""
    try:
        code: int = module.run(args)
    except (KeyboardInterrupt, Exception) as exc:  # a closed stdout is a BrokenPipeError
        exit_code = ending_exit_code(exc)
        if exit_code == EXIT_TERMINATED:
            sys.stderr.write("zk2kraft: terminated (SIGTERM); cleaned up\n")
        elif exit_code == EXIT_INTERRUPTED:
            sys.stderr.write("zk2kraft: interrupted\n")
        elif exit_code == EXIT_BROKEN_PIPE:
            # The reader of stdout went away (`zk2kraft inspect --json | head`): not a bug.
            # Point stdout at /dev/null so the interpreter's final flush stays quiet; 141 =
            # 128 + SIGPIPE, what a shell reports for a command killed by a closed pipe.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        elif exit_code == EXIT_INTERNAL:
            # An unexpected exception is a bug, not a finding: exit 70 so scripts never read a
            # crash as "blockers found" (1). The traceback goes to stderr with -v.
            logging.getLogger(__name__).debug("internal error", exc_info=True)
            sys.stderr.write(
                f"zk2kraft {args.command}: internal error: {type(exc).__name__}: {exc}"
                " (run with -v for the traceback)\n"
            )
        else:
            sys.stderr.write(f"zk2kraft {args.command}: error: {exc}\n")
        return exit_code
    return code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
