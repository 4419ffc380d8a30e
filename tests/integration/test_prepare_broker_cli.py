"""`zk2kraft prepare-broker` on broker log dirs as ZooKeeper-mode Kafka leaves them, against a
real ZooKeeper tree, driven through the CLI.

A ZooKeeper-mode broker's `meta.properties` (written by hand here, as Kafka 3.9.1's `KafkaServer`
writes it: version 0, broker.id, cluster.id, no directory.id) must come out with exactly one new
line, `directory.id=...`, and nothing else changed; a dir that has an id keeps it; a running
broker (Kafka's `.lock` held) is refused with exit 3, a dir that is not a broker log dir with
exit 2, and neither is written. That the id is the one `migrate --offline` names, and that real
Kafka keeps it, is checked in test_offline_cli.py and tests/oracle/test_offline_rehearsal.py.

The partition directories (issue 29): Kafka 2.8 left partition directories without
`partition.metadata`, and Kafka 4.4 renames such a directory away as stray at its first KRaft
start. The expected file is Kafka's `PartitionMetadataFile` format, written here by hand from
the topic id this test puts into ZooKeeper: `version: 0`, a newline, `topic_id: <id>`, no final
newline. A directory whose id differs or whose partition is not this broker's is refused with
exit 1, naming it, and then nothing at all is written.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from kazoo.client import KazooClient

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
CLUSTER_ID = "S8mNfXcLS4mBhHgpG6S9iQ"
ZK_MODE_META = ("#\n#Mon Nov 23 17:00:00 UTC 2026\nbroker.id=2\nversion=0\n"
                f"cluster.id={CLUSTER_ID}\n")
ORDERS_ID = "oAccmSkkRVmvd0ZGKDBw8w"  # Kafka Uuid text (22 chars, URL-safe base64)
RF1_ID = "Xr2y2Ue7T5yAdAx8xGGoXg"
FOREIGN_ID = "q5W7a1dIRmSxHf7uBa0Bqg"  # an id ZooKeeper does not hold
# orders: replicated over brokers 1 and 2; rf1: one replica per partition (what lost data)
TOPICS: dict[str, tuple[str, dict[int, list[int]]]] = {
    "orders": (ORDERS_ID, {0: [2, 1], 1: [1, 2]}),
    "rf1": (RF1_ID, {0: [2], 1: [1]}),
}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ZK2KRAFT, "prepare-broker", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": "200"})


@pytest.fixture
def zk(zk_server: object, zk_chroot: str, zk_chroot_client: KazooClient) -> str:
    """A stopped ZooKeeper-mode cluster's tree, as Kafka 3.x writes the znodes this needs:
    `/cluster/id` and each topic's assignment with its topic id (znode version 3)."""
    client = zk_chroot_client
    client.create("/cluster/id", json.dumps({"version": "1", "id": CLUSTER_ID}).encode(),
                  makepath=True)
    for name, (topic_id, assignment) in TOPICS.items():
        client.create(f"/brokers/topics/{name}", json.dumps({
            "partitions": {str(p): r for p, r in assignment.items()}, "topic_id": topic_id,
            "adding_replicas": {}, "removing_replicas": {}, "version": 3}).encode(),
            makepath=True)
        for p, replicas in assignment.items():
            client.create(f"/brokers/topics/{name}/partitions/{p}/state", json.dumps({
                "controller_epoch": 1, "leader": -1, "version": 1, "leader_epoch": 3,
                "isr": replicas[:1]}).encode(), makepath=True)
    client.create("/brokers/ids", makepath=True)
    return f"{zk_server.connect}{zk_chroot}"  # type: ignore[attr-defined]


def broker_dir(path: Path, meta: str = ZK_MODE_META,
               partitions: Mapping[str, str | None] | None = None) -> Path:
    """A broker log dir: `meta.properties`, Kafka's checkpoint files, and one directory per
    partition with its `partition.metadata` text (None: none, as Kafka 2.8 left it)."""
    path.mkdir()
    (path / "meta.properties").write_text(meta)
    (path / "meta.properties").chmod(0o644)
    (path / "recovery-point-offset-checkpoint").write_text("0\n0\n")
    for name, metadata in (partitions or {}).items():
        (path / name).mkdir()
        (path / name / "00000000000000000000.log").write_bytes(b"\0" * 12)
        if metadata is not None:
            (path / name / "partition.metadata").write_text(metadata)
    return path


def snapshot_tree(root: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every path below root with its mode and (for files) its bytes."""
    out: dict[str, tuple[int, bytes | None]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            p = Path(dirpath) / name
            out[str(p)] = (p.lstat().st_mode, None)
        for name in filenames:
            p = Path(dirpath) / name
            out[str(p)] = (p.lstat().st_mode, p.read_bytes())
    return out


def pm(topic_id: str) -> str:
    return f"version: 0\ntopic_id: {topic_id}"


def test_missing_partition_metadata_is_written_from_zookeepers_topic_id(
        tmp_path: Path, zk: str) -> None:
    d = broker_dir(tmp_path / "d", partitions={
        "orders-0": None,  # Kafka 2.8 wrote none
        "orders-1": pm(ORDERS_ID),
        "rf1-0": None,
        "orders-0.3c9f6a4d0c8a4e1e9a0bb1b9b6fd1a12-delete": None,  # Kafka's own: skipped
        "rf1-1.5b0e8c2d7a6f4e3d9c1b2a0f9e8d7c6b-stray": None,
    })
    before = snapshot_tree(tmp_path)

    dry = run("--log-dirs", str(d), "--zookeeper", zk, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert snapshot_tree(tmp_path) == before  # not even a .lock
    assert f"{d / 'orders-0'}: would write partition.metadata" in dry.stdout
    assert f"{d / 'rf1-0'}: would write partition.metadata" in dry.stdout
    assert f"{d / 'orders-1'}: ok" in dry.stdout
    assert "-delete" not in dry.stdout and "-stray" not in dry.stdout
    assert ("summary: 3 replica directories: 1 ok, 2 would write partition.metadata, "
            "0 refused") in dry.stdout

    done = run("--log-dirs", str(d), "--zookeeper", zk)
    assert done.returncode == 0, done.stderr
    assert (d / "orders-0" / "partition.metadata").read_bytes() == (
        b"version: 0\ntopic_id: oAccmSkkRVmvd0ZGKDBw8w")
    assert (d / "rf1-0" / "partition.metadata").read_bytes() == (
        b"version: 0\ntopic_id: Xr2y2Ue7T5yAdAx8xGGoXg")
    assert (d / "rf1-0" / "partition.metadata").stat().st_mode & 0o777 == 0o644
    assert (d / "orders-1" / "partition.metadata").read_text() == pm(ORDERS_ID)
    assert not (d / "orders-0.3c9f6a4d0c8a4e1e9a0bb1b9b6fd1a12-delete" / "partition.metadata"
                ).exists()
    assert "directory.id=" in (d / "meta.properties").read_text()
    assert "summary: 3 replica directories: 1 ok, 2 partition.metadata written, 0 refused" in (
        done.stdout)

    settled = snapshot_tree(tmp_path)
    again = run("--log-dirs", str(d), "--zookeeper", zk)
    assert again.returncode == 0, again.stderr
    assert "summary: 3 replica directories: 3 ok, 0 partition.metadata written, 0 refused" in (
        again.stdout)
    assert snapshot_tree(tmp_path) == settled


def test_a_differing_id_or_a_replica_not_assigned_here_is_refused_and_nothing_written(
        tmp_path: Path, zk: str) -> None:
    first = broker_dir(tmp_path / "d1", partitions={
        "orders-0": pm(FOREIGN_ID),  # another topic of the same name (re-created): stray
        "orders-1": None,  # would be written, but nothing is while anything is refused
    })
    second = broker_dir(tmp_path / "d2", partitions={
        "rf1-1": None,  # rf1-1 lives on broker 1 only: on broker 2 it is stray
        "gone-0": pm(RF1_ID),  # a topic the migrated metadata does not have
        "lost+found": None,  # not <topic>-<partition>: Kafka refuses the log dir
    })
    dirs = f"{first},{second}"
    before = snapshot_tree(tmp_path)

    for extra in ((), ("--dry-run",)):
        refused = run("--log-dirs", dirs, "--zookeeper", zk, *extra)
        assert refused.returncode == 1, refused.stdout + refused.stderr
        # byte for byte as before, but for Kafka's own `.lock` the real run took
        assert {k: v for k, v in snapshot_tree(tmp_path).items()
                if not k.endswith("/.lock")} == before
        err = refused.stderr
        assert f"{first / 'orders-0'}: refused: topic id differs from the migrated one" in err
        assert FOREIGN_ID in err and ORDERS_ID in err
        assert (f"{second / 'rf1-1'}: refused: partition not assigned to this broker "
                "(replicas [1] do not include broker 2)") in err
        assert f"{second / 'gone-0'}: refused: topic not in the migrated metadata" in err
        assert f"{second / 'lost+found'}: refused: not a <topic>-<partition> directory" in err
        assert "nothing was written" in err
        assert ("summary: 5 replica directories: 0 ok, 1 "
                + ("would write partition.metadata" if extra else "partition.metadata written")
                + ", 4 refused") in refused.stdout
        assert "  refused: topic id differs from the migrated one: 1" in refused.stdout
        assert "  refused: partition not assigned to this broker: 1" in refused.stdout


def test_the_first_log_dir_gets_one_directory_id_line_once(tmp_path: Path, zk: str) -> None:
    first = broker_dir(tmp_path / "d1")
    second = broker_dir(tmp_path / "d2")
    dirs = f"{first},{second}"

    dry = run("--log-dirs", dirs, "--zookeeper", zk, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would set directory.id" in dry.stdout
    assert (first / "meta.properties").read_text() == ZK_MODE_META
    # broker 2 holds orders-0, orders-1 and rf1-0 in ZooKeeper; these dirs hold none of them
    assert "rf1-0: assigned to broker 2 but in none of these log dirs" in dry.stdout

    done = run("--log-dirs", dirs, "--zookeeper", zk)
    assert done.returncode == 0, done.stderr
    text = (first / "meta.properties").read_text()
    assert text.startswith(ZK_MODE_META)
    added = text[len(ZK_MODE_META):]
    assert added.startswith("directory.id=") and added.endswith("\n") and added.count("\n") == 1
    directory_id = added.strip().partition("=")[2]
    assert len(directory_id) == 22 and not directory_id.startswith("-")  # Kafka's Uuid text
    assert (first / "meta.properties").stat().st_mode & 0o777 == 0o644
    assert f"directory.id set to {directory_id}" in done.stdout
    assert (second / "meta.properties").read_text() == ZK_MODE_META  # only the first dir

    again = run("--log-dirs", dirs, "--zookeeper", zk)
    assert again.returncode == 0, again.stderr
    assert "already" in again.stdout
    assert (first / "meta.properties").read_text() == text


def test_an_existing_directory_id_is_kept(tmp_path: Path, zk: str) -> None:
    meta = ZK_MODE_META + "directory.id=oAccmSkkRVmvd0ZGKDBw8w\n"
    d = broker_dir(tmp_path / "d", meta)
    done = run("--log-dirs", str(d), "--zookeeper", zk)
    assert done.returncode == 0, done.stderr
    assert "kept" in done.stdout
    assert (d / "meta.properties").read_text() == meta


@pytest.fixture
def held_lock(tmp_path: Path) -> Iterator[Path]:
    d = broker_dir(tmp_path / "d", partitions={"orders-0": None})
    fd = os.open(d / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what a running Kafka holds
        yield d
    finally:
        os.close(fd)


def test_a_running_broker_is_refused_as_a_broker(held_lock: Path, zk: str) -> None:
    d = held_lock
    for extra in ((), ("--dry-run",)):
        refused = run("--log-dirs", str(d), "--zookeeper", zk, *extra)
        assert refused.returncode == 3, refused.stdout + refused.stderr
        assert f"broker log dir {d} is locked" in refused.stderr
        assert "A running Kafka broker" in refused.stderr
        # (the holder's command line is quoted too: it is this pytest run, whatever it names)
        assert "voter directory" not in refused.stderr
        assert "Kafka controller" not in refused.stderr
        assert (d / "meta.properties").read_text() == ZK_MODE_META
        assert not (d / "orders-0" / "partition.metadata").exists()


def test_the_source_of_the_migrated_metadata_is_required(tmp_path: Path, zk: str) -> None:
    d = broker_dir(tmp_path / "d")
    none = run("--log-dirs", str(d))
    assert none.returncode == 2
    assert "--zookeeper CONNECT" in none.stderr and "--metadata-log DIR" in none.stderr
    both = run("--log-dirs", str(d), "--zookeeper", zk, "--metadata-log", str(tmp_path))
    assert both.returncode == 2
    assert "--zookeeper and --metadata-log" in both.stderr
    assert (d / "meta.properties").read_text() == ZK_MODE_META


def test_the_same_log_dir_twice_is_bad_input(tmp_path: Path, zk: str) -> None:
    d = broker_dir(tmp_path / "d", partitions={"orders-0": None})
    (tmp_path / "link").symlink_to(d)
    before = snapshot_tree(tmp_path)
    twice = run("--log-dirs", f"{d},{d}", "--zookeeper", zk)
    assert twice.returncode == 2
    assert f"--log-dirs: {d} is given twice" in twice.stderr
    linked = run("--log-dirs", f"{d},{tmp_path / 'link'}", "--zookeeper", zk)
    assert linked.returncode == 2
    assert f"--log-dirs: {tmp_path / 'link'} is given twice (the same directory as {d})" in (
        linked.stderr)
    assert snapshot_tree(tmp_path) == before


def test_log_dirs_of_another_cluster_are_bad_input(tmp_path: Path, zk: str) -> None:
    meta = ZK_MODE_META.replace(CLUSTER_ID, "Zm9yZWlnbkNsdXN0ZXIxMg")
    d = broker_dir(tmp_path / "d", meta, partitions={"orders-0": None})
    other = run("--log-dirs", str(d), "--zookeeper", zk)
    assert other.returncode == 2
    assert "cluster.id Zm9yZWlnbkNsdXN0ZXIxMg, but ZooKeeper" in other.stderr
    assert not (d / "orders-0" / "partition.metadata").exists()


def test_dry_run_on_a_read_only_mount_says_what_it_would_change(tmp_path: Path, zk: str) -> None:
    src = broker_dir(tmp_path / "src", partitions={"orders-0": None})
    ro = tmp_path / "ro"
    ro.mkdir()
    mounted = subprocess.run(["mount", "--bind", str(src), str(ro)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {mounted.stderr.decode().strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(ro)], check=True)
        dry = run("--log-dirs", str(ro), "--zookeeper", zk, "--dry-run")
        real = run("--log-dirs", str(ro), "--zookeeper", zk)
    finally:
        subprocess.run(["umount", str(ro)], check=True)
    assert dry.returncode == 0, dry.stderr
    assert f"{ro / 'orders-0'}: would write partition.metadata" in dry.stdout
    assert "would set directory.id" in dry.stdout
    assert real.returncode == 3  # the real run cannot write: says so, as before
    assert "broker log dir" in real.stderr and "Read-only" in real.stderr
    assert not (src / "orders-0" / "partition.metadata").exists()


def test_a_dir_that_is_not_a_broker_log_dir_is_bad_input(tmp_path: Path, zk: str) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = run("--log-dirs", str(empty), "--zookeeper", zk)
    assert missing.returncode == 2
    assert f"{empty / 'meta.properties'}: missing" in missing.stderr
    nowhere = run("--log-dirs", str(tmp_path / "nowhere"), "--zookeeper", zk)
    assert nowhere.returncode == 2
    assert "not a directory" in nowhere.stderr
    odd = broker_dir(tmp_path / "odd", "version=0\n")
    bad = run("--log-dirs", str(odd), "--zookeeper", zk)
    assert bad.returncode == 2
    assert "needs broker.id and cluster.id" in bad.stderr
    assert (odd / "meta.properties").read_text() == "version=0\n"


def test_a_copy_of_a_voters_log_is_the_same_source(tmp_path: Path, zk: str) -> None:
    voter = tmp_path / "c3000"
    migrated = subprocess.run([*ZK2KRAFT, "migrate", "--zookeeper", zk, "--offline",
                               f"--voter=3000={voter}", "--spark-master", "in-process"],
                              capture_output=True, text=True, timeout=600)
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    d = broker_dir(tmp_path / "d", partitions={"rf1-0": None, "orders-0": pm(FOREIGN_ID)})
    refused = run("--log-dirs", str(d), "--metadata-log", str(voter))
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert f"{d / 'orders-0'}: refused: topic id differs from the migrated one" in refused.stderr
    assert f"the metadata log in {voter}" in refused.stdout
    (d / "orders-0" / "partition.metadata").unlink()
    done = run("--log-dirs", str(d), "--metadata-log", str(voter))
    assert done.returncode == 0, done.stdout + done.stderr
    assert (d / "rf1-0" / "partition.metadata").read_bytes() == (
        b"version: 0\ntopic_id: Xr2y2Ue7T5yAdAx8xGGoXg")
    assert (d / "orders-0" / "partition.metadata").read_bytes() == (
        b"version: 0\ntopic_id: oAccmSkkRVmvd0ZGKDBw8w")
    assert "summary: 2 replica directories: 0 ok, 2 partition.metadata written, 0 refused" in (
        done.stdout)
