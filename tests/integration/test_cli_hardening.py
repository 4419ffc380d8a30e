"""Issue 31 through the `zk2kraft` command, as a hostile operator meets it, with real ZooKeeper
and local voters: a full or closed stdout and a reader that goes away never change the verdict
about the work; twin broker ids; damaged voter start-up files; flag pairs that mean nothing or
overwrite each other; a `__cluster_metadata-0` that is a plain file; colliding metric names.

Expected codes are the README's exit-code table, written by hand: 0 ok, 1 findings, 2 bad flags
or data, 3 unreachable/unwritable (and "a report could not be written after the work was
done"), 141 stdout's reader went away; never 70.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from samples import SampleSpec
from tests.integration.test_offline_cli import stop_brokers
from tests.support.migration_cluster import claim_on_cutover

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
ENV = {**os.environ, "COLUMNS": "200"}
FULL = "full"  # stdout is /dev/full: every write fails with ENOSPC
CLOSED = "closed"  # stdout closed (`>&-`): Python's sys.stdout is None
BOTH_CLOSED = "both closed"  # stdout and stderr closed: only the exit code speaks


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ZK2KRAFT, *args], capture_output=True, text=True, timeout=600, env=ENV)


def run_with_stdout(how: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run zk2kraft with stdout full or closed (and stderr closed too, for BOTH_CLOSED)."""
    redirect = {FULL: '>/dev/full', CLOSED: '>&-', BOTH_CLOSED: '>&- 2>&-'}[how]
    script = f'exec "$@" {redirect}'
    return subprocess.run(["bash", "-c", script, "zk2kraft", *ZK2KRAFT, *args],
                          capture_output=True, text=True, timeout=600, env=ENV)


def run_reader_gone(*args: str) -> subprocess.CompletedProcess[str]:
    """Run zk2kraft with stdout a pipe whose reader has gone before the first write (what `|
    head -n1` is once head has its line): every write to stdout fails with EPIPE."""
    proc = subprocess.Popen([*ZK2KRAFT, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=ENV)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    code = proc.wait(timeout=600)
    return subprocess.CompletedProcess(proc.args, code, "", err)


def assert_no_bug(r: subprocess.CompletedProcess[str]) -> None:
    assert r.returncode != 70, r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr


def voter_flags(root: Path, ids: tuple[int, ...] = (3000,)) -> list[str]:
    return [f"--voter={v}={root / f'c{v}'}" for v in ids]


def migrated_voter(cluster: Any, root: Path) -> Path:
    """Voter 3000 at ROOT/c3000, migrated (--cutover none) from CLUSTER; exit 0 asserted."""
    voter = root / "c3000"
    done = run("migrate", "--zookeeper", cluster.connect, f"--voter=3000={voter}",
               "--spark-master", "in-process", "--quiet")
    assert done.returncode == 0, done.stderr
    return voter


def assert_parity(cluster: Any, *flags: str) -> None:
    """`zk2kraft verify` passes (exit 0): the voters FLAGS name hold the log ZooKeeper wants."""
    verified = run("verify", "--zookeeper", cluster.connect, *flags)
    assert verified.returncode == 0, verified.stderr + verified.stdout


# -- 1. output that cannot be written never changes the verdict about the work --------------


@pytest.mark.parametrize("how", [FULL, CLOSED, BOTH_CLOSED])
def test_migrate_with_unwritable_stdout_does_the_work_and_exits_3(
    how: str, sample_cluster: Any, tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=2))
    r = run_with_stdout(how, "migrate", "--zookeeper", cluster.connect, *voter_flags(tmp_path),
                        "--spark-master", "in-process")
    assert_no_bug(r)
    assert r.returncode == 3, r.stderr
    if how != BOTH_CLOSED:  # with stderr gone the exit code alone says it
        assert "could not be written to stdout" in r.stderr, r.stderr
        assert ("No space left on device" if how == FULL else "stdout is closed") in r.stderr
    # the work was done all the same: the voter holds the log, and it matches ZooKeeper
    assert_parity(cluster, *voter_flags(tmp_path))


def test_quiet_migrate_with_closed_stdout_has_nothing_to_write_and_exits_0(
    sample_cluster: Any, tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=1))
    r = run_with_stdout(BOTH_CLOSED, "migrate", "--zookeeper", cluster.connect,
                        *voter_flags(tmp_path), "--spark-master", "in-process", "--quiet")
    assert r.returncode == 0


def test_offline_migrate_with_full_stdout_exits_3_after_writing_every_voter(
    sample_cluster: Any, tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=2))
    stop_brokers(cluster.client)
    ids = (3000, 3001, 3002)
    r = run_with_stdout(FULL, "migrate", "--offline", "--zookeeper", cluster.connect,
                        *voter_flags(tmp_path, ids), "--spark-master", "in-process")
    assert_no_bug(r)
    assert r.returncode == 3, r.stderr
    assert "could not be written to stdout (No space left on device)" in r.stderr
    assert_parity(cluster, "--offline", *voter_flags(tmp_path, ids))


@pytest.mark.parametrize("how", [FULL, CLOSED])
def test_plan_verify_inspect_snapshot_with_unwritable_stdout_exit_3(
    how: str, sample_cluster: Any, tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=2))
    voter = str(migrated_voter(cluster, tmp_path))
    for args in (["plan", "--zookeeper", cluster.connect],
                 ["verify", "--zookeeper", cluster.connect, *voter_flags(tmp_path)],
                 ["verify", "--zookeeper", cluster.connect, *voter_flags(tmp_path),
                  "--json", "-"],
                 ["inspect", voter], ["inspect", "--json", voter],
                 ["snapshot", "--zookeeper", cluster.connect]):
        r = run_with_stdout(how, *args)
        assert_no_bug(r)
        assert r.returncode == 3, (args, r.stderr)
        assert f"zk2kraft {args[0]}: its output could not be written to stdout" in r.stderr


def test_a_plan_with_blockers_keeps_exit_1_when_stdout_is_full(sample_cluster: Any) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=1))
    cluster.client.delete("/cluster/id")  # CLUSTER_ID_MISSING blocks
    r = run_with_stdout(FULL, "plan", "--zookeeper", cluster.connect)
    assert_no_bug(r)
    assert r.returncode == 1, r.stderr  # the work's own verdict wins


def test_online_migrate_and_rollback_with_unwritable_stdout(
    sample_cluster: Any, tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=2))
    ids = (3000, 3001, 3002)
    # --cutover none through the online path's flags: work done, stdout full -> 3
    none = run_with_stdout(FULL, "migrate", "--zookeeper", cluster.connect,
                           *voter_flags(tmp_path / "copy", ids), "--cutover", "none")
    assert_no_bug(none)
    assert none.returncode == 3, none.stderr
    # --cutover now with stdout closed: its console goes to stderr when stdout is no terminal,
    # so nothing was lost: 0, and ZooKeeper is handed over
    now = run_with_stdout(CLOSED, "migrate", "--zookeeper", cluster.connect,
                          *voter_flags(tmp_path, ids), "--cutover", "now",
                          "--on-cutover", claim_on_cutover(cluster.connect))
    assert_no_bug(now)
    assert now.returncode == 0, now.stderr
    assert "cutover (now) complete" in now.stderr
    assert cluster.client.exists("/migration") is not None
    # rollback with stdout full: ZooKeeper handed back, then 3 (never 70)
    back = run_with_stdout(FULL, "rollback", "--zookeeper", cluster.connect,
                           *voter_flags(tmp_path, ids))
    assert_no_bug(back)
    assert back.returncode == 3, back.stderr
    assert "could not be written to stdout (No space left on device)" in back.stderr
    assert cluster.client.exists("/migration") is None
    assert cluster.client.exists("/controller") is None
    # a second rollback finds nothing to do; with both streams closed the code alone says 3
    again = run_with_stdout(BOTH_CLOSED, "rollback", "--zookeeper", cluster.connect,
                            *voter_flags(tmp_path, ids))
    assert again.returncode == 3


# -- 2. a reader that goes away ------------------------------------------------------------


def test_a_reader_that_goes_away_is_141_never_a_finding(
    sample_cluster: Any, tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=2))
    first = run_reader_gone("migrate", "--zookeeper", cluster.connect, *voter_flags(tmp_path),
                            "--spark-master", "in-process")
    assert_no_bug(first)
    assert first.returncode == 141, first.stderr
    assert first.stderr == ""  # `| head` is an ordinary way to read: nothing to report
    voter = str(tmp_path / "c3000")
    for args in (["plan", "--zookeeper", cluster.connect],
                 ["verify", "--zookeeper", cluster.connect, *voter_flags(tmp_path)],
                 ["inspect", voter], ["inspect", "--json", voter],
                 ["snapshot", "--zookeeper", cluster.connect],
                 ["migrate", "--zookeeper", cluster.connect,
                  *voter_flags(tmp_path / "again"), "--spark-master", "in-process"]):
        r = run_reader_gone(*args)
        assert_no_bug(r)
        assert r.returncode == 141, (args, r.stderr)
    # the migrate under the gone reader wrote its voter: parity
    assert_parity(cluster, *voter_flags(tmp_path))


def test_a_reader_that_goes_away_keeps_the_works_own_verdict(
    sample_cluster: Any, tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=1))
    migrated_voter(cluster, tmp_path)
    # a change after the copy: verify finds a difference, and says 1 with the pipe gone too
    topic = sorted(cluster.client.get_children("/brokers/topics"))[0]
    changed = json.dumps({"version": 1, "config": {"retention.ms": "1234"}}).encode()
    if cluster.client.exists(f"/config/topics/{topic}"):
        cluster.client.set(f"/config/topics/{topic}", changed)
    else:
        cluster.client.create(f"/config/topics/{topic}", changed)
    r = run_reader_gone("verify", "--zookeeper", cluster.connect, *voter_flags(tmp_path))
    assert_no_bug(r)
    assert r.returncode == 1, r.stderr


# -- 3. twin broker ids ------------------------------------------------------------------


@pytest.mark.parametrize("args", [["--help"], ["plan", "--help"], ["--version"]])
def test_help_that_cannot_be_written_is_exit_3_not_0(args: list[str]) -> None:
    full = run_with_stdout(FULL, *args)
    assert full.returncode == 3, full.stderr
    assert "could not be written to stdout (No space left on device)" in full.stderr
    closed = run_with_stdout(CLOSED, *args)
    assert closed.returncode == 3 and "stdout is closed" in closed.stderr, closed.stderr
    written = run(*args)
    assert written.returncode == 0 and written.stdout and written.stderr == "", written


def test_a_usage_error_stays_exit_2_with_stdout_full() -> None:
    r = run_with_stdout(FULL, "plan", "--no-such-flag")
    assert r.returncode == 2 and "unrecognized arguments: --no-such-flag" in r.stderr, r.stderr


def test_twin_broker_ids_are_refused_naming_both_znodes(
    sample_cluster: Any, tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=1))
    data, _ = cluster.client.get("/brokers/ids/1")
    registration = json.loads(data)
    registration["endpoints"] = ["PLAINTEXT://twin.example:9092"]
    cluster.client.create("/brokers/ids/01", json.dumps(registration).encode())
    voter = tmp_path / "c3000"
    for r in (run("plan", "--zookeeper", cluster.connect),
              run("migrate", "--zookeeper", cluster.connect, f"--voter=3000={voter}",
                  "--spark-master", "in-process"),
              run("migrate", "--zookeeper", cluster.connect, f"--voter=3000={voter}",
                  "--cutover", "now", "--on-cutover", "true")):
        assert_no_bug(r)
        assert r.returncode == 2, r.stderr
        assert "/brokers/ids/01 and /brokers/ids/1 both name broker 1" in r.stderr, r.stderr
    assert not voter.exists()  # refused before any voter was written
    assert cluster.client.exists("/migration") is None  # and before ZooKeeper was touched


# -- 5. flag pairs that mean nothing or overwrite each other ----------------------------------

NOWHERE = "127.0.0.1:9"  # nothing listens there: each refusal must come before connecting


@pytest.mark.parametrize("flag", [["--handoff-timeout", "30"], ["--max-window", "5"]])
def test_cutover_none_refuses_flags_only_a_cutover_reads(flag: list[str], tmp_path: Path) -> None:
    voter = tmp_path / "c3000"
    for cutover in (["--cutover", "none"], []):  # none is the default
        r = run("migrate", "--zookeeper", NOWHERE, f"--voter=3000={voter}", *cutover, *flag)
        assert r.returncode == 2, r.stderr
        assert flag[0] in r.stderr and "--cutover none" in r.stderr, r.stderr
    assert not voter.exists()


def test_two_reports_at_one_file_are_refused_naming_both(tmp_path: Path) -> None:
    report = tmp_path / "plan.out"
    r = run("plan", "--zookeeper", NOWHERE, "--json", str(report), "--html", str(report))
    assert r.returncode == 2, r.stderr
    assert f"--json '{report}' and --html '{report}': the same file" in r.stderr, r.stderr
    assert not report.exists()
    # the same file through another spelling of its path
    other = tmp_path / "sub" / ".." / "plan.out"
    (tmp_path / "sub").mkdir()
    r = run("plan", "--zookeeper", NOWHERE, "--json", str(report), "--html", str(other))
    assert r.returncode == 2 and "the same file" in r.stderr, r.stderr


@pytest.mark.parametrize("inside", [False, True])
def test_a_report_at_or_inside_a_voter_dir_is_refused_before_any_voter_is_written(
    inside: bool, tmp_path: Path
) -> None:
    voter = tmp_path / "c3000"
    report = voter / "migrate.json" if inside else voter
    runs = {
        "migrate": ["migrate", "--zookeeper", NOWHERE, f"--voter=3000={voter}",
                    "--json", str(report)],
        "migrate --cutover now": ["migrate", "--zookeeper", NOWHERE, f"--voter=3000={voter}",
                                  "--cutover", "now", "--json", str(report)],
        "plan": ["plan", "--zookeeper", NOWHERE, f"--voter=3000={voter}", "--html",
                 str(report)],
        "verify": ["verify", "--zookeeper", NOWHERE, f"--voter=3000={voter}", "--json",
                   str(report)],
        "rollback": ["rollback", "--zookeeper", NOWHERE, f"--voter=3000={voter}", "--json",
                     str(report)],
    }
    for name, args in runs.items():
        r = run(*args)
        assert r.returncode == 2, (name, r.stderr)
        assert f"--voter 3000={voter}" in r.stderr, (name, r.stderr)
        assert ("--json" if "--json" in args else "--html") in r.stderr, (name, r.stderr)
        assert not voter.exists(), name  # nothing written, not even the voter dir


def test_two_documents_to_stdout_are_refused(tmp_path: Path) -> None:
    r = run("plan", "--zookeeper", NOWHERE, "--json", "-", "--html", "-")
    assert r.returncode == 2, r.stderr
    assert "--json - and --html -: only one document can go to stdout" in r.stderr


# -- 6. one meaning for a __cluster_metadata-0 that is a plain file ----------------------------


def test_a_metadata_partition_that_is_a_file_is_exit_2_everywhere(
    sample_cluster: Any, tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=1))
    voter = migrated_voter(cluster, tmp_path)
    partition = voter / "__cluster_metadata-0"
    for f in partition.iterdir():
        f.unlink()
    partition.rmdir()
    partition.write_text("x\n")
    fresh = tmp_path / "fresh"  # a voter dir holding only that file
    fresh.mkdir()
    (fresh / "__cluster_metadata-0").write_text("x\n")
    runs = {
        "verify": ["verify", "--zookeeper", cluster.connect, f"--voter=3000={voter}"],
        "inspect": ["inspect", str(voter)],
        "inspect file": ["inspect", str(partition)],
        "plan": ["plan", "--zookeeper", cluster.connect, f"--voter=3000={voter}"],
        "migrate": ["migrate", "--zookeeper", cluster.connect, f"--voter=3000={voter}",
                    "--spark-master", "in-process"],
        "migrate fresh": ["migrate", "--zookeeper", cluster.connect, f"--voter=3000={fresh}",
                          "--spark-master", "in-process"],
        "migrate --cutover now fresh": ["migrate", "--zookeeper", cluster.connect,
                                        f"--voter=3000={fresh}", "--cutover", "now",
                                        "--on-cutover", "true"],
    }
    for name, args in runs.items():
        r = run(*args)
        assert_no_bug(r)
        assert r.returncode == 2, (name, r.stderr)
        named = fresh / "__cluster_metadata-0" if "fresh" in name else partition
        assert f"{named}: is a file, where Kafka keeps the metadata log's directory" in r.stderr, \
            (name, r.stderr)
    # nothing added but the lock file every run (and Kafka) takes first
    assert sorted(p.name for p in fresh.iterdir()) == [".lock", "__cluster_metadata-0"]
    assert cluster.client.exists("/migration") is None


def test_topics_colliding_in_metric_names_are_a_plan_warning_naming_both(
    sample_cluster: Any, tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=1))
    for name, topic_id in (("orders.eu", "AAAAAAAAAAAAAAAAAAAAAQ"),
                           ("orders_eu", "AAAAAAAAAAAAAAAAAAAAAg")):
        cluster.client.create(f"/brokers/topics/{name}", json.dumps(
            {"version": 3, "topic_id": topic_id, "partitions": {"0": [1]},
             "adding_replicas": {}, "removing_replicas": {}}).encode())
        cluster.client.create(f"/brokers/topics/{name}/partitions/0/state", json.dumps(
            {"controller_epoch": 1, "leader": 1, "version": 1, "leader_epoch": 0,
             "isr": [1]}).encode(), makepath=True)
    report = tmp_path / "plan.json"
    r = run("plan", "--zookeeper", cluster.connect, "--json", str(report))
    assert r.returncode == 0, r.stderr  # a warning, not a blocker
    doc = json.loads(report.read_text())
    found = [w for w in doc["warnings"] if w["code"] == "TOPIC_METRIC_NAME_COLLISION"]
    assert len(found) == 1, doc["warnings"]
    assert found[0]["path"] == "/brokers/topics/orders_eu"
    assert "'orders.eu' and 'orders_eu'" in found[0]["message"]
    assert "'orders.eu' and 'orders_eu'" in r.stdout  # the printed plan names both too


# -- 4. the files Kafka reads at start-up, in Kafka's format ----------------------------------


def test_a_damaged_leader_epoch_checkpoint_is_exit_2_in_verify_inspect_and_migrate(
    sample_cluster: Any, tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=1))
    voter = migrated_voter(cluster, tmp_path)
    checkpoint = voter / "__cluster_metadata-0" / "leader-epoch-checkpoint"
    assert checkpoint.read_text() == "0\n1\n1 0\n"  # version 0, one entry: epoch 1 from 0
    checkpoint.write_text("x\ny")  # the audit's case; Kafka 3.9.1 exits at start on it
    for args in (["verify", "--zookeeper", cluster.connect, f"--voter=3000={voter}"],
                 ["inspect", str(voter)],
                 ["plan", "--zookeeper", cluster.connect, f"--voter=3000={voter}"],
                 ["migrate", "--zookeeper", cluster.connect, f"--voter=3000={voter}",
                  "--spark-master", "in-process"]):
        r = run(*args)
        assert_no_bug(r)
        assert r.returncode == 2, (args, r.stderr)
        assert f"{checkpoint}: line 1 'x'" in r.stderr, (args, r.stderr)
    assert checkpoint.read_text() == "x\ny"  # refused, not silently kept or rewritten


CHECKPOINT_RULES = [  # Kafka 3.9's CheckpointFile: what it refuses, and what we say
    ("1\n1\n1 0\n", "version 1 (Kafka reads version 0)"),
    ("0\n2\n1 0\n", "the count line says 2 entries but 1 follow"),
    ("0\n1\n1\n", "line 3 '1' is not 'epoch offset'"),
    ("0\n1\n1 zero\n", "line 3 '1 zero': the offset is not an integer"),
    ("0\n1\n1 0\n\n", "line 4 '' is not 'epoch offset'"),
    ("0\n1\n2147483648 0\n", "the epoch is not an integer Kafka reads"),
]


def test_each_checkpoint_rule_names_the_file_and_line(
    sample_cluster: Any, tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=1))
    voter = migrated_voter(cluster, tmp_path)
    checkpoint = voter / "__cluster_metadata-0" / "leader-epoch-checkpoint"
    for text, said in CHECKPOINT_RULES:
        checkpoint.write_text(text)
        r = run("verify", "--zookeeper", cluster.connect, f"--voter=3000={voter}")
        assert r.returncode == 2, (text, r.stderr)
        assert str(checkpoint) in r.stderr and said in r.stderr, (text, r.stderr)


def test_a_missing_leader_epoch_checkpoint_is_fine_as_kafka_rebuilds_it(
    sample_cluster: Any, tmp_path: Path
) -> None:
    # Kafka 3.9.1 started on a voter dir without the file rebuilds it from the log's batches
    # ("0\n2\n1 0\n2 31\n" after its own election: docs/design/log-format.md, "The voter's start-up
    # files"; tests/oracle/test_oracle_our_logs.py checks it on a real controller)
    cluster = sample_cluster(SampleSpec.clean(topics=1))
    voter = migrated_voter(cluster, tmp_path)
    (voter / "__cluster_metadata-0" / "leader-epoch-checkpoint").unlink()
    for args in (["verify", "--zookeeper", cluster.connect, f"--voter=3000={voter}"],
                 ["inspect", str(voter)],
                 ["migrate", "--zookeeper", cluster.connect, f"--voter=3000={voter}",
                  "--spark-master", "in-process", "--quiet"]):
        r = run(*args)
        assert r.returncode == 0, (args, r.stderr)
    # an empty file reads as no entries in Kafka's CheckpointFile: fine too
    (voter / "__cluster_metadata-0" / "leader-epoch-checkpoint").write_text("")
    r = run("verify", "--zookeeper", cluster.connect, f"--voter=3000={voter}")
    assert r.returncode == 0, r.stderr


def test_a_quorum_state_without_a_field_kafka_requires_is_exit_2(
    sample_cluster: Any, tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=1))
    voter = migrated_voter(cluster, tmp_path)
    qs = voter / "__cluster_metadata-0" / "quorum-state"
    written = qs.read_text()
    for field in ("clusterId", "appliedOffset", "leaderId"):  # mandatory in data_version 0
        state = json.loads(written)
        del state[field]
        qs.write_text(json.dumps(state))
        for args in (["verify", "--zookeeper", cluster.connect, f"--voter=3000={voter}"],
                     ["inspect", str(voter)]):
            r = run(*args)
            assert r.returncode == 2, (args, r.stderr)
            assert f"{qs}: no '{field}', which Kafka requires in data_version 0" in r.stderr
