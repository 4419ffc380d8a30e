"""The online journal under faults, through the CLI against real ZooKeeper (issue 17, items 2, 3
and 7): a journal that cannot be written (a full filesystem before the fence, an immutable
journal after it) ends the run with exit 3 and a message naming the file and the errno, never a
traceback; `rollback` after a run stopped before the fence leaves what the re-run needs; and
`rollback` removes only a `/controller` claim the journal vouches for.

"Full" is real: the first voter and the default journal beside it live on a small tmpfs that a
filler file fills mid-mirror (root mounts it). "Unwritable" is `chattr +i`
(tests/support/immutable.py). Expected codes and znode values are written by hand.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from samples import SampleSpec
from tests.support.churn import Churn
from tests.support.cli_run import communicate
from tests.support.immutable import Immutable
from tests.support.tool_hooks import start_paused_after_fence

pytestmark = pytest.mark.slow

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
VOTERS = (3000, 3001, 3002)


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs at tmp_path/small, unmounted at the end (fails, never skips, without it)."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0755", "tmpfs",
                           str(mount)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.fail(f"a full filesystem needs `mount -t tmpfs` (root): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(directory: Path) -> Path:
    """Write a file in `directory` until its filesystem says ENOSPC; returns the file."""
    filler = directory / "filler"
    chunk = b"\0" * 65536
    with open(filler, "wb", buffering=0) as f:
        while True:
            try:
                f.write(chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                break
        # the last pages a partial chunk may leave
        while True:
            try:
                f.write(b"\0" * 512)
            except OSError:
                break
    return filler


def migrate_cmd(connect: str, dirs: dict[int, Path], *extra: str) -> list[str]:
    return [*ZK2KRAFT, "migrate", "--zookeeper", connect, "--cutover", "manual",
            *[f"--voter={v}={d}" for v, d in dirs.items()], *extra]


def start(cmd: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "200"})


def wait_phase(journal: Path, proc: subprocess.Popen[str], phase: str = "mirror") -> None:
    """Until `proc` has written `phase` to the journal (a journal left by an earlier run must
    be rewritten first: a resume saves it once it mirrors)."""
    earlier = journal.stat().st_mtime_ns if journal.exists() else None
    deadline = time.monotonic() + 120
    while not (journal.exists() and journal.stat().st_mtime_ns != earlier
               and json.loads(journal.read_text())["phase"] == phase):
        if proc.poll() is not None:
            pytest.fail(f"migrate ended early: {proc.communicate()}")
        assert time.monotonic() < deadline, f"never reached phase {phase}"
        time.sleep(0.05)


def verify(connect: str, dirs: dict[int, Path]) -> None:
    """`zk2kraft verify` over every voter: parity with ZooKeeper, the voters alike (exit 0)."""
    result = subprocess.run([*ZK2KRAFT, "verify", "--zookeeper", connect,
                             *[f"--voter={v}={d}" for v, d in dirs.items()]],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


def zk_untouched(zk: Any, epoch: bytes) -> None:
    """ZooKeeper's own controller still leads: never fenced, no /migration."""
    assert zk.get("/controller_epoch")[0] == epoch
    assert zk.get("/controller")[1].ephemeralOwner != 0
    assert zk.exists("/migration") is None


def test_full_filesystem_under_the_first_voter_and_the_journal_is_exit_3_then_a_rerun_finishes(
    sample_cluster: Callable[..., Any], tmp_path: Path, small_fs: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=4, partitions_per_topic=2))
    zk = cluster.client
    epoch = zk.get("/controller_epoch")[0]
    dirs = {3000: small_fs / "c3000", 3001: tmp_path / "c3001", 3002: tmp_path / "c3002"}
    journal = small_fs / ".zk2kraft-journal" / "journal.json"  # the default: beside voter 3000
    cmd = migrate_cmd(cluster.connect, dirs, "--json", str(tmp_path / "m.json"))
    with Churn(cluster.connect, rate=100):
        proc = start(cmd)
        wait_phase(journal, proc)
        filler = fill(small_fs)
        out, err = communicate(proc, 120)  # the next mirror append fills it
    assert proc.returncode == 3, out + err
    assert "Traceback" not in err and "internal error" not in err, err
    assert f"journal {journal}: cannot write (ENOSPC: No space left on device)" in err, err
    assert "ZooKeeper is untouched" in err, err
    zk_untouched(zk, epoch)
    on_file = json.loads(journal.read_text())
    assert on_file["phase"] == "mirror"  # the last state written, intact

    filler.unlink()
    again = start(cmd)
    wait_phase(journal, again)
    time.sleep(1.0)
    again.send_signal(signal.SIGUSR1)
    out, err = communicate(again, 300)
    assert again.returncode == 0, out + err
    assert "resuming in phase mirror" in out + err, out + err
    assert zk.get("/controller_epoch")[0] == str(int(epoch) + 1).encode()
    assert zk.get("/controller")[1].ephemeralOwner == 0
    verify(cluster.connect, dirs)


def test_journal_unwritable_after_the_fence_says_zookeeper_is_fenced_and_a_rerun_finishes(
    sample_cluster: Callable[..., Any], tmp_path: Path, immutable: Immutable
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=4, partitions_per_topic=2))
    zk = cluster.client
    dirs = {v: tmp_path / f"c{v}" for v in VOTERS}
    cmd = [*ZK2KRAFT, "migrate", "--zookeeper", cluster.connect, "--cutover", "now",
           *[f"--voter={v}={d}" for v, d in dirs.items()], "--json", str(tmp_path / "m.json")]
    gate = tmp_path / "gate"
    proc = start_paused_after_fence(cmd, gate)
    journal_dir = tmp_path / ".zk2kraft-journal"
    immutable.freeze([journal_dir, journal_dir / "journal.json"])
    Path(str(gate) + ".go").write_text("go")
    out, err = communicate(proc, 120)
    assert proc.returncode == 3, out + err
    assert "Traceback" not in err and "internal error" not in err, err
    assert (f"journal {journal_dir / 'journal.json'}: cannot write "
            "(EPERM: Operation not permitted)") in err, err
    assert "the file still holds phase 'fencing'" in err and "ZooKeeper IS fenced" in err, err
    assert "re-run this same command" in err and "zk2kraft rollback" in err, err
    assert zk.get("/controller_epoch")[0] == b"4"  # the sample's 3, fenced once
    assert zk.get("/controller")[1].ephemeralOwner == 0
    immutable.release()
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "the previous run's fence had applied (read back)" in again.stdout + again.stderr
    assert zk.get("/controller_epoch")[0] == b"4"  # never fenced twice
    assert json.loads(zk.get("/migration")[0])["kraft_metadata_offset"] == \
        json.loads((tmp_path / "m.json").read_text())["last_offset"]
    verify(cluster.connect, dirs)


def rollback(connect: str, dirs: dict[int, Path], *extra: str
             ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ZK2KRAFT, "rollback", "--zookeeper", connect,
                           *[f"--voter={v}={d}" for v, d in dirs.items()], *extra],
                          capture_output=True, text=True, timeout=300)


def test_rollback_after_a_run_stopped_before_the_fence_keeps_what_the_rerun_needs(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=4, partitions_per_topic=2))
    zk = cluster.client
    epoch = zk.get("/controller_epoch")[0]
    dirs = {v: tmp_path / f"c{v}" for v in VOTERS}
    journal = tmp_path / ".zk2kraft-journal" / "journal.json"
    cmd = migrate_cmd(cluster.connect, dirs, "--json", str(tmp_path / "m.json"))
    with Churn(cluster.connect, rate=50) as churn:
        proc = start(cmd)
        wait_phase(journal, proc)
        time.sleep(1.0)
        proc.send_signal(signal.SIGTERM)
        out, err = communicate(proc, 120)
        assert proc.returncode == 143, out + err
        # the docs say the tool's directories are 0700
        assert stat.S_IMODE(journal.parent.stat().st_mode) == 0o700

        back = rollback(cluster.connect, dirs)
        assert back.returncode == 0, back.stdout + back.stderr
        assert "nothing to roll back: this migration never fenced ZooKeeper (journal phase " \
            "mirror)" in back.stdout, back.stdout
        assert f"journal kept at {journal}" in back.stdout, back.stdout
        assert journal.exists()
        zk_untouched(zk, epoch)

        again = start(cmd)  # the documented re-run: the same command
        wait_phase(journal, again)
        time.sleep(1.0)
        again.send_signal(signal.SIGUSR1)
        out, err = communicate(again, 300)
        assert again.returncode == 0, out + err
        assert "resuming in phase mirror" in out + err, out + err
        churn.stop()
        verify(cluster.connect, dirs)


def test_rollback_removes_only_a_controller_claim_the_journal_vouches_for(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=2))
    zk = cluster.client
    dirs = {v: tmp_path / f"c{v}" for v in VOTERS}
    done = subprocess.run([*ZK2KRAFT, "migrate", "--zookeeper", cluster.connect, "--cutover",
                           "now", *[f"--voter={v}={d}" for v, d in dirs.items()]],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    journal = tmp_path / ".zk2kraft-journal" / "journal.json"
    ours = zk.get("/controller")[0]
    assert json.loads(journal.read_text())["claims"] == [ours.decode()]

    # another controller's persistent claim, even with our broker id and epoch: refused
    foreign = (b'{"version":2,"brokerid":3000,"timestamp":"1700000000000",'
               b'"kraftControllerEpoch":1}')
    zk.set("/controller", foreign)
    epoch_before = zk.get("/controller_epoch")[0]
    refused = rollback(cluster.connect, dirs)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "none of the claims in the journal" in refused.stderr, refused.stderr
    assert zk.get("/controller")[0] == foreign
    assert zk.exists("/migration") is not None
    assert zk.get("/controller_epoch")[0] == epoch_before
    assert journal.exists()

    # without the journal no persistent claim is removed either
    aside = tmp_path / "elsewhere"
    refused = rollback(cluster.connect, dirs, "--journal", str(aside))
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert f"no journal at {aside / 'journal.json'}" in refused.stderr, refused.stderr
    assert zk.get("/controller")[0] == foreign

    # the KRaft controller that took over from us (its epoch above ours): removed
    successor = (b'{"version":2,"brokerid":3001,"timestamp":"1700000000001",'
                 b'"kraftControllerEpoch":2}')
    zk.set("/controller", successor)
    back = rollback(cluster.connect, dirs)
    assert back.returncode == 0, back.stdout + back.stderr
    assert "rolled back: removed /controller, /migration" in back.stdout, back.stdout
    # the brokers followed the KRaft quorum: going back drops their copy of it (issue 30)
    said = " ".join(back.stdout.split())
    assert ("then roll the brokers one at a time: each stopped, its __cluster_metadata-0 "
            "directory deleted") in said, said
    assert zk.exists("/controller") is None and zk.exists("/migration") is None
    assert not journal.exists()


def test_rollback_that_cannot_move_the_journal_aside_says_so_with_exit_3(
    sample_cluster: Callable[..., Any], tmp_path: Path, immutable: Immutable
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=2, partitions_per_topic=2))
    zk = cluster.client
    dirs = {v: tmp_path / f"c{v}" for v in VOTERS}
    done = subprocess.run([*ZK2KRAFT, "migrate", "--zookeeper", cluster.connect, "--cutover",
                           "now", *[f"--voter={v}={d}" for v, d in dirs.items()]],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    journal_dir = tmp_path / ".zk2kraft-journal"
    immutable.freeze([journal_dir])
    back = rollback(cluster.connect, dirs)
    assert back.returncode == 3, back.stdout + back.stderr
    assert "Traceback" not in back.stderr and "internal error" not in back.stderr
    assert f"journal {journal_dir / 'journal.json'}: cannot move it aside" in back.stderr
    assert "ZooKeeper IS handed back" in back.stderr and "remove the journal" in back.stderr
    assert zk.exists("/controller") is None and zk.exists("/migration") is None
