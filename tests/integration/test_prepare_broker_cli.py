"""`zk2kraft prepare-broker` on broker log dirs as Kafka 3.9 leaves them, driven through the CLI.

A ZooKeeper-mode broker's `meta.properties` (written by hand here, as Kafka 3.9.1's `KafkaServer`
writes it: version 0, broker.id, cluster.id, no directory.id) must come out with exactly one new
line, `directory.id=...`, and nothing else changed; a dir that has an id keeps it; a running
broker (Kafka's `.lock` held) is refused with exit 3, a dir that is not a broker log dir with
exit 2, and neither is written. That the id is the one `migrate --offline` names, and that real
Kafka keeps it, is checked in test_offline_cli.py and tests/oracle/test_offline_rehearsal.py.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
ZK_MODE_META = ("#\n#Mon Nov 23 17:00:00 UTC 2026\nbroker.id=2\nversion=0\n"
                "cluster.id=S8mNfXcLS4mBhHgpG6S9iQ\n")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ZK2KRAFT, "prepare-broker", *args], capture_output=True, text=True,
                          timeout=120)


def broker_dir(path: Path, meta: str = ZK_MODE_META) -> Path:
    path.mkdir()
    (path / "meta.properties").write_text(meta)
    (path / "meta.properties").chmod(0o644)
    return path


def test_the_first_log_dir_gets_one_directory_id_line_once(tmp_path: Path) -> None:
    first = broker_dir(tmp_path / "d1")
    second = broker_dir(tmp_path / "d2")
    dirs = f"{first},{second}"

    dry = run("--log-dirs", dirs, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would set directory.id" in dry.stdout
    assert (first / "meta.properties").read_text() == ZK_MODE_META

    done = run("--log-dirs", dirs)
    assert done.returncode == 0, done.stderr
    text = (first / "meta.properties").read_text()
    assert text.startswith(ZK_MODE_META)
    added = text[len(ZK_MODE_META):]
    assert added.startswith("directory.id=") and added.endswith("\n") and added.count("\n") == 1
    directory_id = added.strip().partition("=")[2]
    assert len(directory_id) == 22 and not directory_id.startswith("-")  # Kafka's Uuid text
    assert (first / "meta.properties").stat().st_mode & 0o777 == 0o644
    assert f"broker 2: directory.id set to {directory_id}" in done.stdout
    assert (second / "meta.properties").read_text() == ZK_MODE_META  # only the first dir

    again = run("--log-dirs", dirs)
    assert again.returncode == 0, again.stderr
    assert "already" in again.stdout
    assert (first / "meta.properties").read_text() == text


def test_an_existing_directory_id_is_kept(tmp_path: Path) -> None:
    meta = ZK_MODE_META + "directory.id=oAccmSkkRVmvd0ZGKDBw8w\n"
    d = broker_dir(tmp_path / "d", meta)
    done = run("--log-dirs", str(d))
    assert done.returncode == 0, done.stderr
    assert "kept" in done.stdout
    assert (d / "meta.properties").read_text() == meta


def test_a_running_broker_is_refused(tmp_path: Path) -> None:
    d = broker_dir(tmp_path / "d")
    fd = os.open(d / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what a running Kafka holds
        refused = run("--log-dirs", str(d))
    finally:
        os.close(fd)
    assert refused.returncode == 3, refused.stdout + refused.stderr
    assert str(d) in refused.stderr
    assert (d / "meta.properties").read_text() == ZK_MODE_META


def test_a_dir_that_is_not_a_broker_log_dir_is_bad_input(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = run("--log-dirs", str(empty))
    assert missing.returncode == 2
    assert f"{empty / 'meta.properties'}: missing" in missing.stderr
    nowhere = run("--log-dirs", str(tmp_path / "nowhere"))
    assert nowhere.returncode == 2
    assert "not a directory" in nowhere.stderr
    odd = broker_dir(tmp_path / "odd", "version=0\n")
    bad = run("--log-dirs", str(odd))
    assert bad.returncode == 2
    assert "needs broker.id and cluster.id" in bad.stderr
    assert (odd / "meta.properties").read_text() == "version=0\n"
