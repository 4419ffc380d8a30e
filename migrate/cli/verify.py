"""`zk2kraft verify`: prove the voters' metadata log says what ZooKeeper says.

Flow: check flags (exit 2 naming the flag) before touching anything; read every `--voter` log
(exit 3 if a directory cannot be read, 2 if a log is corrupt — the message names file, byte and
offset); check that all voters hold the same log (a voter that differs is a difference of kind
`voter`, located at the first batch that differs); replay the first voter's log into an image
(`verify.load_log`; a transaction still open at the end is a difference of kind `transaction`);
read ZooKeeper afresh (exit 3 if unreachable); compare with the image ZooKeeper implies
(`verify.parity_report`, or the Spark job with `--spark-master`); print the differences and write
`--json` (`{"parity","differences","changed_by_kafka","not_checked","checked","provenance"}`,
mode 0600, `-` = stdout). Exit 1 on any difference, 0 on parity: Kafka's own changes since the
migration (dual-write) and what cannot be judged (a voter set without `--quorum-voters`) are
listed in their own classes and do not fail it. Secrets never print: SCRAM is compared by
digest, passwords by presence, and the strict redaction policy applies to every output.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from migrate._private_file import check_output_paths, voter_dirs, write_json_report
from migrate._progress import ProgressBars, progress_wanted
from migrate.cli.args import (
    SUB_EPILOG,
    Subparsers,
    add_offline,
    add_output,
    add_voters,
    add_zookeeper,
)
from migrate.errors import BadFlagError
from migrate.flags.offline import check_still_stopped
from migrate.flags.voters import check_voter_flags
from migrate.flags.zookeeper import connect_options, read_snapshot
from verify import (
    JsonValue,
    ParityReport,
    VoterLogs,
    expected_image,
    parity_report,
    read_voters,
    render_parity,
    transaction_differences,
    voter_file_differences,
)
from zkreader import ClusterSnapshot

__all__ = ["add_parser", "check_verify_flags", "run"]


def check_verify_flags(args: argparse.Namespace) -> list[tuple[int, Path]]:
    """Validate `verify`'s flags before anything is read.

    Returns:
        The voters, in the order given.

    Raises:
        BadFlagError: `check_voter_flags` refused the voters (the rules `plan` and `migrate`
            apply too), or the `--json` path cannot be written.
    """
    voters = check_voter_flags(args.voters, required=True)
    check_output_paths([("--json", args.json)], voter_dirs(voters))
    _quorum_ids(args)
    return voters


def _quorum_ids(args: argparse.Namespace) -> list[int] | None:
    """`--quorum-voters`' ids (every --voter must be one of them), or None."""
    if not getattr(args, "quorum_voters", None):
        return None
    from migrate.flags.standin import quorum_voter_ids

    ids = quorum_voter_ids(args.quorum_voters)
    missing = [n for n, _ in args.voters if n not in ids]
    if missing:
        raise BadFlagError(f"--quorum-voters {args.quorum_voters}: does not name --voter "
                           f"{', '.join(map(str, missing))}")
    return ids


def _compare(
    args: argparse.Namespace, logs: VoterLogs, snapshot: ClusterSnapshot
) -> ParityReport:
    expected = expected_image(snapshot, offline=args.offline)
    p = logs.loaded.provenance
    cluster_id = snapshot.cluster_id.cluster_id if snapshot.cluster_id is not None else None
    extra = (logs.differences + transaction_differences(logs.loaded)
             + voter_file_differences(args.voters, cluster_id=cluster_id,
                                      voter_ids=_quorum_ids(args)))
    voter_ids: list[JsonValue] = [node_id for node_id, _ in args.voters]
    provenance: dict[str, JsonValue] = {
        "voters": voter_ids,
        "replayed_voter": logs.reference,
        "last_offset": p.last_offset,
        "last_epoch": p.last_epoch,
        "batches": p.batches,
        "records": p.records,
        "aborted_transactions": logs.loaded.aborted_transactions,
    }
    report = parity_report(expected, logs.loaded.image, extra=extra, provenance=provenance)
    if args.spark_master and args.spark_master != "in-process":
        from migrate.bulk.pipeline import compare_spark
        from migrate.bulk.spark_start import SparkStarter

        starter = SparkStarter(args.spark_master).start()
        try:
            diffs = compare_spark(expected, logs.loaded.image, starter.get())
        finally:
            starter.stop()
        report = ParityReport.of((*extra, *diffs), report.checked, report.provenance)
    return report


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


def _verify_spark_master(value: str) -> str:
    """verify's `--spark-master`: migrate's values less 'auto' (verify has no size rule)."""
    if value == "auto":
        raise argparse.ArgumentTypeError(
            "'auto' is migrate's; verify takes 'in-process' or a Spark master URL")
    return value


def add_parser(sub: Subparsers) -> None:
    """Register `zk2kraft verify` and its flags (`cli.build_parser` calls it)."""
    p = sub.add_parser(
        "verify",
        help="prove parity between the voters' logs and ZooKeeper",
        description="Replay the voter log into a metadata image, read ZooKeeper afresh and "
        "compare field by field. Exit 1 on any difference.",
        epilog=_VERIFY_EPILOG + SUB_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_zookeeper(p)
    add_voters(p, required=True)
    p.add_argument("--quorum-voters", metavar="ID@HOST:PORT,...",
                   help="the controllers' controller.quorum.voters, when --voter names only "
                   "some of them (after a --standin migration the controllers' disks are on "
                   "their own hosts): quorum-state's voter set is checked against it; without "
                   "it a quorum-state listing more voters than the --voter ids is 'not "
                   "checked'")
    add_offline(p, target=False)
    add_output(p)
    p.add_argument("--spark-master", default="in-process", metavar="in-process|URL",
                   type=_verify_spark_master,
                   help="where the parity joins run (default in-process): 'in-process' never "
                   "starts Spark; a Spark master URL (local[4], spark://...) runs them on that "
                   "Spark, as for migrate")


def run(args: argparse.Namespace) -> int:
    """Run `verify`; returns 1 on any difference, 0 on parity."""
    voters = check_verify_flags(args)
    options = connect_options(args)
    json_to_stdout = args.json == "-"
    wanted = progress_wanted(quiet=args.quiet, stdout_is_document=json_to_stdout)
    with ProgressBars(enabled=wanted) as bars:
        logs = read_voters(voters, progress=bars.task("replaying the voter log (bytes)"))
        snapshot = read_snapshot(options, bars)
    if args.offline:
        check_still_stopped(snapshot)  # a running broker would be a moving target
    report = _compare(args, logs, snapshot)
    write_json_report(args.json, report.to_json())
    if not args.quiet:
        console = Console(stderr=json_to_stdout, highlight=False)
        render_parity(console, report)
    return 0 if report.parity else 1
