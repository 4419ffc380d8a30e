"""`zk2kraft plan --fleet FILE`: check the flags and the file, run the job, write the reports.

Flow: every flag and every line of FILE is checked before anything starts (exit 2 naming the
flag or `FILE:LINE`); Spark starts (`--spark-master`, `local[*]` by default: `job.fleet_master`);
one job plans every cluster (`job.run_fleet`) with a progress bar over the clusters; the table
is printed, `--json` and `--html` written; the exit code is `report.fleet_exit_code`'s.
"""

from __future__ import annotations

import argparse

from migrate._private_file import check_output_paths, write_json_report, write_report
from migrate._progress import ProgressBars, progress_wanted
from migrate.errors import BadFlagError
from migrate.fleet.job import Judge

__all__ = ["run_fleet_plan"]

# plan's single-cluster flags, which a fleet line gives per cluster instead (or not at all)
_PER_CLUSTER = {
    "zookeeper": "--zookeeper", "voters": "--voter", "standin": "--standin",
    "controllers": "--controller", "quorum_voters": "--quorum-voters",
    "controller_config": "--controller-config", "offline": "--offline",
    "metadata_version": "--metadata-version", "zk_sasl": "--zk-sasl",
    "zk_sasl_username": "--zk-sasl-username", "zk_tls": "--zk-tls",
    "zk_tls_ca": "--zk-tls-ca", "zk_tls_cert": "--zk-tls-cert", "zk_tls_key": "--zk-tls-key",
    "zk_tls_no_verify": "--zk-tls-no-verify",
}


def _check_flags(args: argparse.Namespace) -> None:
    for attr, flag in _PER_CLUSTER.items():
        if getattr(args, attr, None):
            raise BadFlagError(f"{flag} with --fleet: give it per cluster on its line of "
                               f"{args.fleet}")
    if args.target_kafka != "3.9":
        raise BadFlagError(f"--target-kafka with --fleet: give it per cluster on its line of "
                           f"{args.fleet}")
    # plan's own check of its reports (the fleet writes no directory)
    check_output_paths([("--json", args.json), ("--html", args.html)])


def run_fleet_plan(args: argparse.Namespace, judge: Judge) -> int:
    """Run `plan --fleet` with `plan`'s judgement (`judge`, `cli.plan.plan_result`); returns 3
    if any cluster is unreachable, else 1 if any is blocked, else 0.

    Raises:
        BadFlagError: a flag, or a line of the fleet file (exit 2, naming it).
        SparkError: Spark could not start or the job failed as a whole (exit 3).
    """
    from migrate.bulk.run import spark_start_timeout_s
    from migrate.fleet.file import read_fleet_file
    from migrate.fleet.job import fleet_master, run_fleet, run_fleet_in_process
    from migrate.fleet.report import fleet_exit_code, fleet_html, fleet_json, print_fleet

    _check_flags(args)
    clusters = read_fleet_file(args.fleet, zk_timeout=float(args.zk_timeout))
    to_stdout = args.json == "-" or args.html == "-"
    wanted = progress_wanted(quiet=args.quiet, stdout_is_document=to_stdout)
    master = args.spark_master or "local[*]"
    with ProgressBars(enabled=wanted, delay_s=0.0) as bars:
        progress = bars.task("planning clusters")
        if master == "in-process":
            result = run_fleet_in_process(clusters, judge, progress=progress)
        else:
            from migrate.bulk.spark_start import SparkStarter

            starter = SparkStarter(fleet_master(master, len(clusters))).start()
            try:
                runtime = starter.get(timeout=spark_start_timeout_s())
                result = run_fleet(runtime, clusters, judge, progress=progress)
            finally:
                starter.stop()
    write_json_report(args.json, fleet_json(result))
    if args.html is not None:
        write_report("--html", args.html, fleet_html(result).encode("utf-8"))
    if not args.quiet:
        print_fleet(result, to_stderr=to_stdout)
    return fleet_exit_code(result)
