"""`zk2kraft plan`: the pre-flight. Reads ZooKeeper, writes nothing but the reports asked for.

Flow: check every flag (exit 2 naming it) before connecting; read the tree (exit 3 if ZooKeeper
cannot be reached within `--zk-timeout`, exit 2 naming the znode if one is malformed); translate
it exactly as `migrate` would, to count the records and collect the translator's blockers; judge
it (`migrate.preflight.checks`); print tables and write `--json`. Exit 1 when anything blocks.
With `--standin` and the controllers (the flags `migrate` takes, checked by the same
`check_standin_flags`), or with `--voter` (online, or `--offline`), the operator's sequence of
that path follows the tables and goes into `--json` as `operator_sequence`
(`migrate.online.operator_sequence`).

Output routing keeps stdout machine-readable when asked: with `--json -` the document is the
only thing on stdout and the tables go to stderr; `--quiet` prints no tables or bars at all.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from migrate._private_file import (
    check_output_paths,
    voter_dirs,
    write_json_report,
    write_report,
)
from migrate._progress import ProgressBars, progress_wanted
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
from migrate.errors import BadFlagError
from migrate.flags.offline import resolve_metadata_version
from migrate.flags.standin import StandInSpec, check_standin_flags
from migrate.flags.voters import check_voter_flags
from migrate.flags.zookeeper import connect_options, read_snapshot
from migrate.preflight.broker_release import BrokerRelease, probe_brokers
from migrate.preflight.checks import PlanSummary, standin_summary, summarize
from migrate.preflight.findings import Finding
from zkreader import ClusterSnapshot

if TYPE_CHECKING:
    from migrate.online.operator_sequence import OperatorSequence
    from migrate.translate.translation import TranslationResult
    from verify import VoterDiff
    from writers import MetadataVersion

__all__ = ["add_parser", "check_plan_flags", "plan_result", "run"]

_LISTENER_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


def check_plan_flags(args: argparse.Namespace
                     ) -> tuple[list[tuple[int, Path]], StandInSpec | None]:
    """Validate `plan`'s own flags before anything connects.

    Returns:
        The `--voter` pairs (possibly none), checked by the rules `migrate` applies, and the
        stand-in flags (None without `--standin`), checked as `migrate` checks them.

    Raises:
        BadFlagError: naming the flag (`--voter`, `--standin`, `--controller`,
            `--quorum-voters`, `--json`, `--html`; `--metadata-version` is refused by argparse
            already).
    """
    voters = check_voter_flags(args.voters, required=False)
    standin = check_standin_flags(args.standin, args.controllers, args.quorum_voters,
                                  args.controller_config, voters_given=bool(args.voters),
                                  cutover=None)
    if standin is not None and args.offline:
        raise BadFlagError("--standin with --offline: the stand-in leads running controllers "
                           "through an online migration; an offline one has no cutover")
    if not _LISTENER_NAME.match(args.controller_listener_name):
        raise BadFlagError(f"--controller-listener-name {args.controller_listener_name!r}: "
                           "a listener name is letters, digits, '_' and '-'")
    args.metadata_version = resolve_metadata_version(
        args.metadata_version, offline=args.offline, target_kafka=args.target_kafka,
        upgrade_after=True)
    dirs = voter_dirs(voters)
    if standin is not None:
        dirs.append((f"--standin's DIR {standin.log_dir}", standin.log_dir))
    check_output_paths([("--json", args.json), ("--html", args.html)], dirs)
    from migrate.online.canary import check_bootstrap_servers

    args.bootstrap_addresses = check_bootstrap_servers(args.bootstrap_server)  # migrate's check
    if not 0 < args.api_versions_timeout <= 300:
        raise BadFlagError(f"--api-versions-timeout {args.api_versions_timeout:g}: seconds, "
                           "more than 0 and at most 300")
    return voters, standin


def plan_result(
    snapshot: ClusterSnapshot,
    *,
    metadata_version: MetadataVersion,
    password_encoder_secret: str | None,
    voter_ids: Sequence[int] = (),
    offline: bool = False,
    target_kafka: str = "3.9",
    brokers: Sequence[BrokerRelease] = (),
) -> tuple[TranslationResult, PlanSummary]:
    """Translate the snapshot as `migrate` would, and judge it: the records and the plan's data.

    Raises:
        TranslationError: a znode cannot be expressed as KRaft records (exit 2, names the path).
    """
    from migrate.translate.framing import TranslationOptions
    from migrate.translate.translation import translate

    result = translate(
        snapshot,
        TranslationOptions(
            metadata_version=metadata_version,
            password_encoder_secret=password_encoder_secret,
            offline=offline,
            target_kafka=target_kafka,
        ),
    )
    return result, summarize(
        snapshot,
        records=result.counts,
        extra_blockers=result.blockers,
        extra_warnings=result.warnings,
        voter_ids=voter_ids,
        offline=offline,
        brokers=brokers,
        metadata_version=metadata_version,
    )


def add_parser(sub: Subparsers) -> None:
    """Register `zk2kraft plan` and its flags (`cli.build_parser` calls it)."""
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
        epilog=SUB_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_zookeeper(p, required=False)
    add_voters(p, required=False)
    add_standin(p)
    p.add_argument("--controller-listener-name", default="CONTROLLER", metavar="NAME",
                   help="the controllers' controller.listener.names, as the printed sequence "
                   "uses it (default CONTROLLER)")
    add_metadata_version(p)
    add_offline(p, target=True, upgrade_after=True)
    add_output(p)
    p.add_argument("--html", metavar="FILE", help="write a self-contained HTML report (0600)")
    p.add_argument("--bootstrap-server", metavar="HOST:PORT[,HOST:PORT]",
                   help="also ask the brokers which Kafka they run (ApiVersions, sent before any "
                   "authentication: no credential is needed or sent): every registered broker "
                   "on the listener these addresses belong to, an address no broker advertises "
                   "itself; TLS listeners are not asked. Their lines tighten the source's "
                   "bounds when every registered broker answers")
    p.add_argument("--api-versions-timeout", metavar="SECONDS", type=float, default=5.0,
                   help="with --bootstrap-server: how long each broker's answer is awaited "
                   "(default 5; brokers are asked 16 at a time)")
    p.add_argument(
        "--password-encoder-secret",
        metavar="SECRET",
        default=os.environ.get("ZK2KRAFT_PASSWORD_ENCODER_SECRET"),
        help="brokers' password.encoder.secret, to decode encrypted dynamic broker passwords "
        "(or env ZK2KRAFT_PASSWORD_ENCODER_SECRET)",
    )
    g = p.add_argument_group(
        "fleet (instead of --zookeeper: many clusters in one Spark job)",
        "FILE holds one cluster a line: NAME CONNECT [FLAG ...], '#' starts a comment. FLAGs "
        "are this command's per-cluster flags (--zk-timeout, --zk-sasl, --zk-sasl-mechanism, "
        "--zk-sasl-username, --zk-tls*, --metadata-version, --offline, --target-kafka); "
        "secrets are named by environment variable only: --zk-digest-env VAR, "
        "--zk-sasl-password-env VAR, --password-encoder-secret-env VAR. Exit 3 if any "
        "cluster is unreachable, else 1 if any is blocked, else 0; --json holds one object "
        "a cluster (plan's document plus name, status, error, path, engine).")
    g.add_argument("--fleet", metavar="FILE",
                   help="plan every cluster FILE lists, each read and judged as plan does, in "
                   "one Spark job; the command's --zk-timeout bounds each cluster's connect")
    g.add_argument("--spark-master", metavar="URL|in-process", default=None,
                   help="with --fleet: the Spark master (default local[*], which runs 4 task "
                   "slots a core since the tasks wait on the network; spark://HOST:PORT for a "
                   "real cluster); 'in-process' plans the clusters one after another without "
                   "Spark")


def run(args: argparse.Namespace) -> int:
    """Run `plan`; returns 1 when blockers were found, else 0 (`--fleet`: `run_fleet_plan`)."""
    if args.fleet is not None:
        from migrate.fleet.command import run_fleet_plan

        return run_fleet_plan(args, plan_result)  # the fleet judges with this very function
    if args.zookeeper is None:
        raise BadFlagError("--zookeeper CONNECT is required (or --fleet FILE)")
    if args.spark_master is not None:
        raise BadFlagError("--spark-master needs --fleet: plan reads one cluster in-process")
    voters, standin = check_plan_flags(args)
    options = connect_options(args)
    json_to_stdout = args.json == "-"
    html_to_stdout = args.html == "-"
    wanted = progress_wanted(quiet=args.quiet, stdout_is_document=json_to_stdout or html_to_stdout)
    with ProgressBars(enabled=wanted) as bars:
        snapshot = read_snapshot(options, bars)
    brokers = ([] if not args.bootstrap_addresses else
               probe_brokers(snapshot, args.bootstrap_addresses, args.api_versions_timeout))
    result, summary = plan_result(
        snapshot,
        metadata_version=args.metadata_version,
        password_encoder_secret=args.password_encoder_secret,
        voter_ids=[node_id for node_id, _ in voters] if standin is None
        else sorted(standin.voters),
        offline=args.offline,
        # online, the migration itself ends on 3.9 (a 4.N target is the printed upgrade's)
        target_kafka=args.target_kafka if args.offline else "3.9",
        brokers=brokers,
    )
    if standin is not None:
        summary = standin_summary(summary, snapshot.migration)
    sequence = _sequence(args, snapshot, standin, voters)
    samples = None
    diffs: list[VoterDiff] = []
    if voters:  # the dry run: what migrate would write, and how the voters differ
        from migrate.cli.record_samples import record_samples
        from verify import voter_diffs

        summary = _with_voter_blockers(summary, snapshot, result, voters)
        samples = record_samples(result.records)
        diffs = voter_diffs(snapshot, voters, offline=args.offline)
    doc = summary.to_json()
    if voters:
        doc["voters"] = [_voter_json(d) for d in diffs]
    if sequence is not None:
        doc["operator_sequence"] = sequence.to_json()
    write_json_report(args.json, doc)
    if args.html is not None:
        write_report("--html", args.html,
                     _html_page(summary, diffs, source=args.zookeeper,
                                sequence=sequence).encode("utf-8"))
    if not args.quiet:
        _print_tables(summary, samples, diffs, source=args.zookeeper,
                      to_stderr=json_to_stdout or html_to_stdout)
        from verify import plan_console

        console = plan_console(stderr=json_to_stdout or html_to_stdout)
        if summary.source is not None:
            found = summary.source
            console.print(f"source: {found.describe()}"
                          + (f"\n  from: {'; '.join(found.evidence)}" if found.evidence else "")
                          + "".join(f"\n  path: {p}" for p in found.paths()),
                          markup=False, highlight=False, soft_wrap=True)
        if sequence is not None:
            for line in sequence.lines():
                console.print(line, markup=False, highlight=False, soft_wrap=True)
        elif args.offline:
            console.print("To print the operator's sequence for this cluster, add the --voter "
                          "ID=DIR flags `migrate --offline` will get.", markup=False,
                          highlight=False, soft_wrap=True)
    return 1 if summary.report.blockers else 0


def _sequence(args: argparse.Namespace, snapshot: ClusterSnapshot, standin: StandInSpec | None,
              voters: Sequence[tuple[int, Path]]) -> OperatorSequence | None:
    """The operator's sequence of the path these flags plan: the stand-in, `--offline` with
    `--voter`, or online `--voter`; None without either transport (nothing to name)."""
    from migrate.online import operator_sequence as seq

    common = {"metadata_version": args.metadata_version, "zookeeper": args.zookeeper,
              "controller_listener": args.controller_listener_name,
              "target_kafka": args.target_kafka}
    if standin is not None:
        return seq.operator_sequence(snapshot, standin, **common)
    if not voters:
        return None
    # `voters` come from check_voter_flags: already absolute, resolved directories
    if args.offline:
        return seq.offline_sequence(snapshot, voters, **common)
    return seq.online_voter_sequence(snapshot, voters, **common)


def _with_voter_blockers(summary: PlanSummary, snapshot: ClusterSnapshot,
                         result: TranslationResult,
                         voters: Sequence[tuple[int, Path]]) -> PlanSummary:
    """Add a blocker for every voter `migrate` would refuse (the same checks), and a warning
    for what a killed `migrate` left in a voter's staging dir (`bulk.voters.staging_findings`).

    `VOTER_LOCKED`: its `.lock` is held by another process (a running Kafka controller, another
    zk2kraft run), which `migrate` refuses with exit 3 naming the holder; plan names the same
    holder, having only queried the lock, never taken it.
    `VOTER_STATE`: `migrate` refuses a voter that holds another cluster's or node's files, a
    different log, a quorum-state from a running quorum, or this very log with files a
    controller would not start on; plan runs that check against the bytes migrate would write,
    so the two agree.
    """
    from migrate.bulk.voters import (
        VoterTarget,
        expected_log,
        staging_findings,
        voter_state_findings,
    )
    from writers import encode_record, voter_lock_holder

    targets = [VoterTarget(node_id, Path(d).expanduser().resolve()) for node_id, d in voters]
    found = [Finding("VOTER_LOCKED", f"`migrate` refuses it (exit 3): {held}", str(t.path))
             for t in targets if (held := voter_lock_holder(t.path)) is not None]
    # what a killed run left (`PROMOTION_UNFINISHED`, `STAGING_LEFT_OVER`): warnings, as
    # migrate finishes or removes it first; a locked voter's staging is a running run's
    locked = {f.path for f in found}
    left = staging_findings([t for t in targets if str(t.path) not in locked])
    if snapshot.cluster_id is not None:  # else CLUSTER_ID_MISSING already blocks
        expected = expected_log([encode_record(r) for r in result.records], snapshot)
        found += voter_state_findings(targets, snapshot.cluster_id.cluster_id, expected)
    if not found and not left:
        return summary
    report = type(summary.report)(summary.report.blockers + tuple(found),
                                  summary.report.warnings + tuple(left))
    return PlanSummary(report, summary.records, summary.brokers, summary.topics,
                       summary.partitions, summary.source)


def _voter_json(d: VoterDiff) -> dict[str, object]:
    """One voter of `plan --json`'s `voters`: its directory and how its log differs."""
    if d.parity is None:
        return {"node_id": d.node_id, "directory": str(d.directory), "holds_log": False,
                "parity": None, "differences": []}
    parity = d.parity.to_json()
    return {"node_id": d.node_id, "directory": str(d.directory), "holds_log": True,
            "parity": parity["parity"], "differences": parity["differences"]}


def _print_tables(
    summary: PlanSummary,
    samples: Mapping[str, Sequence[Mapping[str, object]]] | None,
    diffs: Sequence[VoterDiff],
    *,
    source: str,
    to_stderr: bool,
) -> None:
    from verify import plan_console, render_plan

    render_plan(
        plan_console(stderr=to_stderr),
        blockers=summary.report.blockers,
        warnings=summary.report.warnings,
        records=summary.records,
        brokers=summary.brokers,
        topics=summary.topics,
        partitions=summary.partitions,
        source=source,
        samples=samples,
        voters=[(d.node_id, str(d.directory), d.parity) for d in diffs],
    )


def _html_page(summary: PlanSummary, diffs: Sequence[VoterDiff], *, source: str,
               sequence: OperatorSequence | None = None) -> str:
    """The self-contained page for a change ticket; the first voter holding a log is diffed,
    and the operator's sequence (with `--standin`) follows as copyable text."""
    from verify import Report, render_html

    held = [d for d in diffs if d.parity is not None]
    lines: dict[str, int | str] = {
        "zookeeper": source,
        "brokers": summary.brokers,
        "topics": summary.topics,
        "partitions": summary.partitions,
        "records": sum(summary.records.values()),
    }
    for d in diffs:
        lines[f"voter {d.node_id}"] = (
            "no log yet" if d.parity is None
            else "matches ZooKeeper" if d.parity.parity
            else f"{len(d.parity.differences)} difference(s)"
        )
    report = Report(
        title="zk2kraft plan",
        summary=lines,
        blockers=summary.report.blockers,
        warnings=summary.report.warnings,
        records=summary.records,
        parity=held[0].parity if held else None,
        texts=() if sequence is None else (("Operator's sequence", "\n".join(sequence.lines())),),
    )
    return render_html(report)
