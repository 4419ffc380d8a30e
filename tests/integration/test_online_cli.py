"""`zk2kraft migrate --cutover now|manual` end to end against real ZooKeeper.

A background writer changes the tree while the tool pre-copies, mirrors and cuts over; then
`zk2kraft verify` (replaying the log, reading ZooKeeper afresh) must find 0 differences, and the
log must be one open-then-closed "ZK Migration" transaction. The "KRaft controller" of the
handoff is a script that claims /controller with a higher kraftControllerEpoch, as Kafka's
controller does (`KafkaZkClient.tryRegisterKRaftControllerAsActiveController`).
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from samples import SampleSpec
from tests.support.churn import Churn
from tests.support.cli_run import communicate
from tests.support.migration_cluster import claim_on_cutover
from tests.support.scram_restatement import migration_types
from writers import open_log_source

pytestmark = pytest.mark.slow

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
VOTERS = (3000, 3001, 3002)


def online(connect: str, root: Path, *extra: str, mode: str = "now",
           **kw: Any) -> subprocess.Popen[str]:
    cmd = [*ZK2KRAFT, "migrate", "--zookeeper", connect,
           *[f"--voter={v}={root / f'c{v}'}" for v in VOTERS],
           "--cutover", mode, "--json", str(root / "migrate.json"), *extra]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "200", **kw.get("env", {})})


def finish(proc: subprocess.Popen[str], timeout: float = 300) -> tuple[int, str, str]:
    out, err = communicate(proc, timeout)
    return proc.returncode, out, err


def verify(connect: str, root: Path) -> subprocess.CompletedProcess[str]:
    cmd = [*ZK2KRAFT, "verify", "--zookeeper", connect,
           *[f"--voter={v}={root / f'c{v}'}" for v in VOTERS], "--json", str(root / "v.json")]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def record_types(voter: Path) -> list[str]:
    out = []
    for e in open_log_source(voter).entries():
        out += [r.type for r in e.batch.records]
    return out


def assert_one_closed_transaction(root: Path) -> list[str]:
    logs = [(root / f"c{v}" / "__cluster_metadata-0") for v in VOTERS]
    first = b"".join(p.read_bytes() for p in sorted(logs[0].glob("*.log")))
    for other in logs[1:]:
        assert b"".join(p.read_bytes() for p in sorted(other.glob("*.log"))) == first
    # a SCRAM user removed while mirroring adds the restatement transaction after the migration's
    types = migration_types(record_types(root / f"c{VOTERS[0]}"))
    assert types[:2] == ["FEATURE_LEVEL_RECORD", "BEGIN_TRANSACTION_RECORD"]
    assert types[-2:] == ["ZK_MIGRATION_STATE_RECORD", "END_TRANSACTION_RECORD"]
    assert types.count("BEGIN_TRANSACTION_RECORD") == 1
    assert types.count("END_TRANSACTION_RECORD") == 1
    return types


def test_cutover_now_under_churn_gives_parity_and_window_figures(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=10, partitions_per_topic=4))
    with Churn(cluster.connect, rate=200) as churn:
        churn.wait_changes(100)
        proc = online(cluster.connect, tmp_path, "--on-cutover", claim_on_cutover(cluster.connect))
        code, out, err = finish(proc)
        assert code == 0, err + out
        assert churn.fenced.is_set()  # its next write failed the /controller_epoch check
        churn.stop()
        assert churn.errors == [], churn.errors[:3]
        # paced at 200/s; the rate reached is a figure (benchmarks/cutover.py), not asserted
        print(f"churn: {churn.changes} changes at {churn.achieved_rate:.0f}/s; "
              f"window_ms {json.loads((tmp_path / 'migrate.json').read_text())['window_ms']}")
        assert churn.kinds_done() >= churn.ALL_KINDS, churn.kinds_done()
        doc = json.loads((tmp_path / "migrate.json").read_text())
        assert doc["window_ms"]["tool"] is not None and doc["window_ms"]["tool"] > 0
        assert doc["window_ms"]["total"] is not None
        assert doc["window_ms"]["total"] >= doc["window_ms"]["tool"]
        assert doc["fence"]["controller_epoch"] == 4  # the sample's /controller_epoch 3, plus 1
        assert doc["last_offset"] > 0 and doc["mirrored_records"] > 0
        assert "window: tool (t1-t0)" in out + err
        assert_one_closed_transaction(tmp_path)
        # /migration names the log's last offset and epoch
        mig = json.loads(churn.client.get("/migration")[0])
        assert mig["kraft_metadata_offset"] == doc["last_offset"]
        assert mig["kraft_metadata_epoch"] == 1 and mig["kraft_controller_id"] == 3000
        result = verify(cluster.connect, tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
    # a re-run after completion changes nothing
    again = online(cluster.connect, tmp_path)
    code, out, err = finish(again)
    assert code == 0 and "already finished" in out + err


def test_manual_cutover_waits_for_sigusr1(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=2))
    proc = online(cluster.connect, tmp_path, mode="manual")
    journal = tmp_path / ".zk2kraft-journal" / "journal.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if journal.exists() and json.loads(journal.read_text())["phase"] == "mirror":
            break
        time.sleep(0.1)
    time.sleep(1.0)
    assert proc.poll() is None  # still mirroring: nothing cut over yet
    assert json.loads(journal.read_text())["phase"] == "mirror"
    proc.send_signal(signal.SIGUSR1)
    code, out, err = finish(proc)
    assert code == 0, err
    types = assert_one_closed_transaction(tmp_path)
    # nothing changed while it mirrored, so the summary's record counts are the log's own
    doc = json.loads((tmp_path / "migrate.json").read_text())
    assert doc["mirrored_records"] == 0 and doc["delta_records"] == 0
    assert doc["records"] == dict(sorted(Counter(types).items()))
    assert verify(cluster.connect, tmp_path).returncode == 0


LOCK_HOLDER = (
    "import fcntl, os, sys, time\n"
    "fd = os.open(sys.argv[1], os.O_RDWR)\n"
    "fcntl.lockf(fd, fcntl.LOCK_EX)\n"
    "print('locked', flush=True)\n"
    "time.sleep(120)\n"
)


def rollback(connect: str, root: Path) -> subprocess.CompletedProcess[str]:
    cmd = [*ZK2KRAFT, "rollback", "--zookeeper", connect,
           *[f"--voter={v}={root / f'c{v}'}" for v in VOTERS]]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def test_rollback_refuses_while_locked_then_lets_a_zookeeper_controller_lead(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=2))
    code, out, err = finish(online(cluster.connect, tmp_path))
    assert code == 0, err
    zk = cluster.client
    assert zk.exists("/migration") is not None
    # dual-write by a KRaft controller in epoch 9 wrote its epoch into a state znode
    topic = sorted(zk.get_children("/brokers/topics"))[0]
    spath = f"/brokers/topics/{topic}/partitions/0/state"
    state = json.loads(zk.get(spath)[0])
    zk.set(spath, json.dumps({**state, "controller_epoch": 9}).encode())

    holder = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER,
                               str(tmp_path / "c3001" / ".lock")], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        refused = rollback(cluster.connect, tmp_path)
        assert refused.returncode == 3 and "c3001" in refused.stderr, refused.stderr
        assert zk.exists("/migration") is not None  # nothing was touched
    finally:
        holder.kill()
        holder.wait()

    done = rollback(cluster.connect, tmp_path)
    assert done.returncode == 0, done.stderr
    assert zk.exists("/controller") is None and zk.exists("/migration") is None
    epoch_data, epoch_stat = zk.get("/controller_epoch")
    assert int(epoch_data) >= 10  # above the 9 in the state znode
    # a ZooKeeper controller is elected and moves a partition's leadership (KafkaController)
    zk.create("/controller", b'{"version":2,"brokerid":1,"timestamp":"1",'
              b'"kraftControllerEpoch":-1}', ephemeral=True)
    new_epoch = int(epoch_data) + 1
    tx = zk.transaction()
    tx.set_data("/controller_epoch", str(new_epoch).encode(), version=epoch_stat.version)
    assert not any(isinstance(r, Exception) for r in tx.commit())
    current = json.loads(zk.get(spath)[0])
    assert current["controller_epoch"] <= new_epoch  # PartitionStateMachine would not abort
    tx = zk.transaction()
    tx.check("/controller_epoch", epoch_stat.version + 1)
    tx.set_data(spath, json.dumps({**current, "controller_epoch": new_epoch,
                                   "leader_epoch": current["leader_epoch"] + 1}).encode())
    assert not any(isinstance(r, Exception) for r in tx.commit())
    assert not (tmp_path / ".zk2kraft-journal" / "journal.json").exists()


def test_manual_cutover_on_enter_at_a_terminal(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    """The operator runs `--cutover manual` on a terminal, watches the mirror, presses Enter."""
    cluster = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=2))
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    cmd = [*ZK2KRAFT, "migrate", "--zookeeper", cluster.connect,
           *[f"--voter={v}={tmp_path / f'c{v}'}" for v in VOTERS], "--cutover", "manual",
           "--on-cutover", claim_on_cutover(cluster.connect), "--handoff-timeout", "30",
           "--json", str(tmp_path / "migrate.json")]
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, close_fds=True,
                            start_new_session=True, env={**env, "TERM": "xterm-256color"})
    os.close(slave)
    screen = bytearray()
    lock = threading.Lock()

    def drain() -> None:  # keep reading, or the tool blocks writing its live status
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer of the terminal has gone
                return
            if not chunk:
                return
            with lock:
                screen.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()

    def seen(text: bytes) -> bool:
        with lock:
            return text in screen

    try:
        deadline = time.monotonic() + 120
        while not seen(b"press Enter"):
            assert proc.poll() is None and time.monotonic() < deadline, bytes(screen)[-3000:]
            time.sleep(0.1)
        journal = tmp_path / ".zk2kraft-journal" / "journal.json"
        time.sleep(1.0)
        assert proc.poll() is None  # mirroring, waiting for the operator
        assert json.loads(journal.read_text())["phase"] == "mirror"
        assert cluster.client.get("/controller_epoch")[0] == b"3"  # not fenced yet
        os.write(master, b"\r")  # Enter
        code = proc.wait(timeout=300)
        reader.join(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    out = bytes(screen).decode(errors="replace")
    assert code == 0, out[-3000:]
    assert "cutover (manual) complete" in out, out[-3000:]
    # the mirror's live status line went away when the cutover began, and was not redrawn under
    # the fence's, drain's and handoff's messages
    assert "mirror: " in out.split("fenced: ", 1)[0]
    assert "mirror: " not in out.split("fenced: ", 1)[1], out[-3000:]
    zk = cluster.client
    assert zk.get("/controller_epoch")[0] == b"4"  # the sample's 3, fenced once
    mig = json.loads(zk.get("/migration")[0])
    assert (mig["kraft_controller_id"], mig["kraft_controller_epoch"]) == (3000, 1)
    # our claim carried kraftControllerEpoch 1; the --on-cutover controller took it over with 2
    assert json.loads(zk.get("/controller")[0])["kraftControllerEpoch"] == 2
    doc = json.loads((tmp_path / "migrate.json").read_text())
    assert doc["cutover"] == "manual"
    assert doc["window_ms"]["tool"] is not None and doc["window_ms"]["tool"] > 0
    assert doc["window_ms"]["total"] is not None
    assert doc["window_ms"]["total"] >= doc["window_ms"]["tool"]
    assert mig["kraft_metadata_offset"] == doc["last_offset"]
    assert_one_closed_transaction(tmp_path)
    assert verify(cluster.connect, tmp_path).returncode == 0


def test_a_topic_reusing_an_id_during_the_mirror_stops_before_the_fence(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    """Issue 17: topic-00001's znode copied to topic.with_dot while `--cutover manual` mirrors.
    The run stops by itself before any fence (no SIGUSR1 needed to see it), naming both znodes
    and the id; ZooKeeper's controller is untouched; deleting the copy and running the same
    command again resumes from the journal and cuts over with parity."""
    from tests.support.zk import tree_state

    cluster = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=2))
    zk = cluster.client
    controller_before, epoch_before = zk.get("/controller"), zk.get("/controller_epoch")
    proc = online(cluster.connect, tmp_path, mode="manual")
    journal = tmp_path / ".zk2kraft-journal" / "journal.json"
    deadline = time.monotonic() + 120
    while not (journal.exists() and json.loads(journal.read_text())["phase"] == "mirror"):
        assert proc.poll() is None and time.monotonic() < deadline, finish(proc)
        time.sleep(0.1)
    data, _ = zk.get("/brokers/topics/topic-00001")
    topic_id = json.loads(data)["topic_id"]
    zk.create("/brokers/topics/topic.with_dot", data)
    zk_after_copy = tree_state(zk)
    try:
        code, out, err = finish(proc, timeout=120)
    finally:
        if proc.poll() is None:  # still mirroring: the copy went unnoticed
            proc.kill()
            proc.communicate()
    assert code == 1, out + err
    assert "DUPLICATE_TOPIC_ID /brokers/topics/topic.with_dot" in err
    assert "/brokers/topics/topic-00001" in err and topic_id in err
    assert "Stopped before the fence: ZooKeeper was not changed" in err
    assert "Traceback" not in err
    # ZooKeeper: not fenced, nothing written (its controller and epoch as they were)
    assert tree_state(zk) == zk_after_copy
    assert zk.get("/controller") == controller_before
    assert zk.get("/controller_epoch") == epoch_before
    assert zk.exists("/migration") is None
    assert json.loads(journal.read_text())["phase"] == "mirror"
    names = [r["name"] for r in _topic_records(tmp_path / f"c{VOTERS[0]}")]
    assert "topic.with_dot" not in names and "topic-00001" in names
    # the way out the message gives: delete the copy, run the same command again
    zk.delete("/brokers/topics/topic.with_dot")
    rerun = online(cluster.connect, tmp_path, mode="now")
    code, out, err = finish(rerun)
    assert code == 0, out + err
    assert_one_closed_transaction(tmp_path)
    assert verify(cluster.connect, tmp_path).returncode == 0


def _topic_records(voter: Path) -> list[dict[str, Any]]:
    out = []
    for e in open_log_source(voter).entries():
        out += [dict(r.data) for r in e.batch.records if r.type == "TOPIC_RECORD"]
    return out


def test_a_topic_reusing_an_id_after_the_last_mirror_read_stops_the_drain_saying_zk_is_fenced(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    """The copy lands between the mirror's last read and the fence (the run held there by the
    test-only pause hook): the drain refuses it, saying ZooKeeper IS fenced, with nothing of it
    in the log; a re-run resuming at the drain says the same; deleting the copy and running the
    same command again finishes the drain."""
    cluster = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=2))
    zk = cluster.client
    gate = tmp_path / "gate"
    proc = online(cluster.connect, tmp_path,
                  env={"ZK2KRAFT_TEST_PAUSE_AT": f"before_fence:{gate}"})
    try:
        deadline = time.monotonic() + 120
        while not Path(f"{gate}.reached").exists():
            assert proc.poll() is None and time.monotonic() < deadline, finish(proc)
            time.sleep(0.1)
        data, _ = zk.get("/brokers/topics/topic-00001")
        topic_id = json.loads(data)["topic_id"]
        zk.create("/brokers/topics/topic.with_dot", data)
        Path(f"{gate}.go").write_text("")
        code, out, err = finish(proc, timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert code == 1, out + err
    assert "DUPLICATE_TOPIC_ID /brokers/topics/topic.with_dot" in err
    assert "/brokers/topics/topic-00001" in err and topic_id in err
    assert "ZooKeeper IS fenced" in err and "Traceback" not in err
    assert json.loads(zk.get("/controller")[0])["brokerid"] == VOTERS[0]  # our claim
    assert "topic.with_dot" not in [r["name"] for r in _topic_records(tmp_path / "c3000")]
    # a re-run before the copy is deleted resumes at the drain: it refuses the same way, and
    # still says ZooKeeper is fenced (the resumed drain once left that out)
    code, out, err = finish(online(cluster.connect, tmp_path), timeout=120)
    assert code == 1, out + err
    assert "DUPLICATE_TOPIC_ID /brokers/topics/topic.with_dot" in err
    assert "ZooKeeper IS fenced" in err and "Traceback" not in err
    zk.delete("/brokers/topics/topic.with_dot")
    code, out, err = finish(online(cluster.connect, tmp_path))
    assert code == 0, out + err
    assert_one_closed_transaction(tmp_path)
    assert verify(cluster.connect, tmp_path).returncode == 0


def test_an_online_run_over_a_tree_with_a_topic_id_used_twice_writes_nothing(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    from tests.support.zk import tree_state

    cluster = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=2))
    data, _ = cluster.client.get("/brokers/topics/topic-00001")
    cluster.client.create("/brokers/topics/topic.with_dot", data)
    before = tree_state(cluster.client)
    code, out, err = finish(online(cluster.connect, tmp_path), timeout=120)
    assert code == 1, out + err
    assert "DUPLICATE_TOPIC_ID /brokers/topics/topic.with_dot" in err
    assert "/brokers/topics/topic-00001" in err and json.loads(data)["topic_id"] in err
    assert tree_state(cluster.client) == before  # not fenced, nothing written
    assert not (tmp_path / ".zk2kraft-journal" / "journal.json").exists()
    for v in VOTERS:  # at most the lock file: no log, no meta.properties
        voter = tmp_path / f"c{v}"
        assert not voter.exists() or {p.name for p in voter.iterdir()} <= {".lock"}
