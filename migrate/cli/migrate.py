"""`zk2kraft migrate`: thin CLI layer over `migrate.bulk.run.run_bulk` (`--cutover none`).

Parses and checks flags (exit 2 naming the flag, exit 3 naming an unusable voter dir) before
anything connects, runs the copy, prints the summary (tables on stdout, or stderr when `--json -`
puts the document on stdout) and writes the `--json` document with mode 0600. `--cutover now`
and `manual` (the online migration) are `migrate.cli.migrate_online`.
"""

from __future__ import annotations

import argparse
import os

from migrate._private_file import check_output_paths, voter_dirs, write_json_report
from migrate._progress import ProgressBars, progress_wanted
from migrate.bulk.run import BulkOptions, BulkOutcome, run_bulk
from migrate.bulk.voters import check_voters
from migrate.cli.args import (
    SUB_EPILOG,
    Subparsers,
    add_metadata_version,
    add_offline,
    add_output,
    add_standin,
    add_voters,
    add_zookeeper,
)
from migrate.errors import BadFlagError, BlockersFoundError
from migrate.flags.offline import resolve_metadata_version
from migrate.flags.standin import check_standin_flags
from migrate.flags.zookeeper import connect_options
from migrate.judge import blockers_message, overrides_given

__all__ = ["add_parser", "bulk_options", "run"]


def bulk_options(args: argparse.Namespace) -> BulkOptions:
    """Check `migrate`'s flags and build the options, before anything connects.

    Raises:
        BadFlagError: a flag is wrong (exit 2, names it).
        VoterUnavailableError: a voter directory cannot be created or written (exit 3).
    """
    if args.on_cutover:
        raise BadFlagError("--on-cutover needs --cutover now or manual")
    if args.journal:
        raise BadFlagError("--journal needs --cutover now or manual (--cutover none keeps none)")
    if args.broker_wait is not None:
        raise BadFlagError("--broker-wait needs --cutover now or manual with --standin")
    if args.fence_without_brokers:
        raise BadFlagError("--fence-without-brokers needs --cutover now or manual with "
                           "--standin")
    if getattr(args, "controller_logs", None) or getattr(args, "html", None):
        raise BadFlagError("--controller-log/--html need --cutover now or manual (they report "
                           "the cutover window)")
    if getattr(args, "bootstrap_server", None) or getattr(args, "command_config", None):
        raise BadFlagError("--bootstrap-server/--command-config need --cutover now or manual "
                           "(the canary measures a cutover)")
    if getattr(args, "handoff_timeout", None) is not None:
        raise BadFlagError("--handoff-timeout with --cutover none: nothing is handed over; it "
                           "needs --cutover now or manual")
    if getattr(args, "max_window", None) is not None:
        raise BadFlagError("--max-window with --cutover none: there is no cutover window to "
                           "bound; it needs --cutover now or manual (with --bootstrap-server)")
    targets = check_voters(args.voters)
    check_output_paths([("--json", args.json)], voter_dirs(targets))
    return BulkOptions(
        connect=connect_options(args),
        voters=tuple(targets),
        metadata_version=args.metadata_version,
        password_encoder_secret=args.password_encoder_secret,
        spark_master=args.spark_master,
        overrides=overrides_given(args),
        offline=args.offline,
        target_kafka=args.target_kafka,
    )


_MIGRATE_EPILOG = """\
--cutover none copies and stops there: ZooKeeper and its controller run on untouched, so the copy
is a rehearsal (verify it, inspect it). A running cluster moves with --cutover now or manual: the
same copy into the live logs, then the mirror, the fence and the handoff to the KRaft controllers
that --on-cutover starts (or, with --standin, to the running controllers). Every broker stopped:
--offline.

""" + SUB_EPILOG

def add_parser(sub: Subparsers) -> None:
    """Register `zk2kraft migrate` and its flags (`cli.build_parser` calls it)."""
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
    add_zookeeper(p)
    add_voters(p, required=False)
    add_standin(p)
    add_metadata_version(p)
    add_offline(p, target=True)
    add_output(p)
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
    p.add_argument("--handoff-timeout", type=float, default=None, metavar="S",
                   help="how long to wait for a KRaft controller to claim /controller after "
                   "--on-cutover (t2; default 120)")
    p.add_argument("--broker-wait", type=float, default=None, metavar="S",
                   help="with --standin and --cutover now: how long the cutover waits for "
                   "every broker ZooKeeper listed (now or when the mirror began) to be "
                   "registered with the stand-in and fetching from it, as Kafka's "
                   "WAIT_FOR_BROKERS does; after that the run stops with exit 3 and nothing "
                   "fenced (default 60). With --cutover manual a signal given while a broker "
                   "does not serve is refused at once, naming it, and mirroring goes on "
                   "(refused without --standin)")
    p.add_argument("--fence-without-brokers", action="store_true",
                   help="with --standin: once --broker-wait ran out, cut over even so, with a "
                   "warning (the brokers that did not serve must register with the next "
                   "controller; the run ends with exit 4, BROKERS_UNREGISTERED_AT_FENCE)")
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


def run(args: argparse.Namespace) -> int:
    """Run `migrate`; 0 when the voters hold the migration, 1 on blockers."""
    if args.offline and args.cutover != "none":
        raise BadFlagError(f"--offline with --cutover {args.cutover}: an offline migration has "
                           "no cutover (the brokers are stopped); use --cutover none")
    # one metadata.version for every path: --metadata-version or the target's default
    args.metadata_version = resolve_metadata_version(
        args.metadata_version, offline=args.offline, target_kafka=args.target_kafka
    )
    # checked for every --cutover (--standin with none is refused); loaded once (the
    # --controller-config's PEM stores), then handed to the online run
    standin = check_standin_flags(args.standin, args.controllers, args.quorum_voters,
                                  args.controller_config, voters_given=bool(args.voters),
                                  cutover=args.cutover)
    if args.cutover in ("now", "manual"):
        from migrate.cli import migrate_online

        return migrate_online.run(args, standin)
    options = bulk_options(args)
    to_stdout = args.json == "-"
    wanted = progress_wanted(quiet=args.quiet, stdout_is_document=to_stdout)
    with ProgressBars(enabled=wanted) as bars:
        outcome = run_bulk(options, bars=bars)
    _report(args, outcome, source=args.zookeeper, to_stdout=to_stdout)
    if outcome.refused:  # the tables and --json are out; cli.main turns this into exit 1
        raise BlockersFoundError(blockers_message(outcome.summary.report.blockers))
    return 0


def _report(args: argparse.Namespace, outcome: BulkOutcome, *, source: str,
            to_stdout: bool) -> None:
    write_json_report(args.json, outcome.to_json())
    if not args.quiet:
        _print(outcome, source=source, to_stderr=to_stdout, offline=args.offline,
               names_directories=args.metadata_version.supports_directories)


def _print(outcome: BulkOutcome, *, source: str, to_stderr: bool, offline: bool,
           names_directories: bool) -> None:
    from verify import plan_console, render_plan

    console = plan_console(stderr=to_stderr)
    summary = outcome.summary
    render_plan(
        console,
        blockers=summary.report.blockers,
        warnings=summary.report.warnings,
        records=summary.records,
        brokers=summary.brokers,
        topics=summary.topics,
        partitions=summary.partitions,
        source=source,
        title="zk2kraft migrate" + (" --offline" if offline else ""),
        records_title="records of the migration",
    )
    if summary.report.blockers:
        return
    if outcome.no_op:
        line = (f"no-op: voter(s) {_ids(outcome.unchanged)} already hold this exact migration "
                f"({outcome.batches} batches, last offset {outcome.last_offset}); nothing written")
    elif not outcome.written:
        line = (f"voter(s) {_ids(outcome.unchanged)} already held this migration's log "
                f"({outcome.batches} batches, last offset {outcome.last_offset}); rewrote the "
                f"quorum-state of voter(s) {_ids(outcome.requorumed)} for the voter set "
                f"{_ids(outcome.unchanged)}")
    else:
        line = (f"migrated: wrote {outcome.batches} batches (offsets 0..{outcome.last_offset}, "
                f"leader epoch 1) to voter(s) {_ids(outcome.written)}")
        if outcome.unchanged:
            line += f"; voter(s) {_ids(outcome.unchanged)} already held it (unchanged)"
        if outcome.requorumed:
            line += f"; quorum-state of voter(s) {_ids(outcome.requorumed)} rewritten"
    times = ", ".join(f"{k} {v:.2f}s" for k, v in outcome.times_s.items())
    console.print(line, markup=False, highlight=False)
    choice = outcome.engine_choice
    why = f" ({choice.reason})" if choice is not None else ""
    console.print(f"engine {outcome.engine}{why}; {times}", markup=False, highlight=False)
    if offline:
        console.print(
            "ZooKeeper was not modified (--offline). The log is final (POST_MIGRATION) and "
            "names no brokers: each registers itself when it starts in KRaft mode. Until the "
            "KRaft controllers first start, going back is starting the old brokers again.",
            markup=False, highlight=False)
        directory_id = (" and gives its first log dir the directory.id the log names for "
                        "its replicas" if names_directories else "")
        console.print(
            "On each broker host, before the broker's first start in KRaft mode: "
            f"zk2kraft prepare-broker --log-dirs <its log.dirs> --zookeeper {source} (it "
            "checks every partition directory against the migrated topic ids and "
            "assignments, writes a missing partition.metadata, refuses a directory Kafka "
            f"would rename away as stray{directory_id}).",
            markup=False, highlight=False)
    else:
        console.print("ZooKeeper was not modified (--cutover none).", markup=False,
                      highlight=False)


def _ids(ids: list[int]) -> str:
    return ", ".join(str(i) for i in ids)
