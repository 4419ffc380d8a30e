"""`migrate --standin` judges the tree before it asks any controller for a vote.

Opening the stand-in writes on the controllers' disks (they commit its LeaderChange and the
PRE_MIGRATION bootstrap) and saves a journal, so a run refused by a blocker must be refused
before that. Here the controllers named on the command line are ports nobody listens on: a run
that asked for votes would wait for them and fail with exit 3, never the exit 1 naming the
blocker. The blockers are set up by hand, each in the form Kafka writes the znode (the
expected codes and paths are the README's / `plan`'s, not computed by the code under test).
The same refusal with real Kafka 3.9.1 controllers following, and the re-run once the blocker
is fixed: tests/oracle/test_standin_refused_cli.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from tests.support.ports import free_port

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CLUSTER_ID = "pQ3m-8_ISia_zwGINzRvyQ"


def _j(obj: object) -> bytes:
    return json.dumps(obj).encode()


def _healthy_tree(c: KazooClient) -> None:
    """Brokers 1 and 2 registered, one topic with an id, the empty /migration controllers in
    migration mode create at start (which the stand-in accepts)."""
    for path in ("/brokers/ids", "/brokers/topics", "/config/topics", "/config/changes",
                 "/admin/delete_topics", "/isr_change_notification",
                 "/log_dir_event_notification"):
        c.ensure_path(path)
    c.create("/cluster/id", _j({"version": "1", "id": CLUSTER_ID}), makepath=True)
    c.create("/controller_epoch", b"1")
    c.create("/feature", _j({"version": 2, "status": 1, "features": {}}))
    for broker_id in (1, 2):
        c.create(f"/brokers/ids/{broker_id}", _j({
            "version": 5, "host": "localhost", "port": 9092 + broker_id, "jmx_port": -1,
            "timestamp": "1700000000000",
            "endpoints": [f"PLAINTEXT://b{broker_id}.example:{9092 + broker_id}"],
            "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"}, "features": {}}),
            ephemeral=True)
    c.create("/controller", _j({"version": 1, "brokerid": 1, "timestamp": "1"}), ephemeral=True)
    _topic(c, "orders", [1, 2], topic_id="tGCUt6tCR3a2R1NDlMdp3Q")
    c.create("/migration", _j({"version": 0, "kraft_controller_id": -1,
                               "kraft_controller_epoch": -1, "kraft_metadata_offset": -1,
                               "kraft_metadata_epoch": -1}))


def _topic(c: KazooClient, name: str, replicas: list[int], topic_id: str | None) -> None:
    doc: dict[str, Any] = {"version": 3, "partitions": {"0": replicas}, "adding_replicas": {},
                           "removing_replicas": {}}
    if topic_id is None:  # a topic created before Kafka 2.8 (version 1, no topic_id yet)
        doc = {"version": 1, "partitions": {"0": replicas}}
    else:
        doc["topic_id"] = topic_id
    c.create(f"/brokers/topics/{name}", _j(doc))
    c.create(f"/brokers/topics/{name}/partitions/0/state", _j({
        "version": 1, "leader": replicas[0], "leader_epoch": 0, "controller_epoch": 1,
        "isr": replicas}), makepath=True)


def _topic_without_id(c: KazooClient) -> None:
    _topic(c, "legacy", [1, 2], topic_id=None)


def _broker_not_registered(c: KazooClient) -> None:
    _topic(c, "stranded", [1, 7], topic_id="8nCo7X6pTqqZ0LWd4bUQ6w")


def _log_dir_event(c: KazooClient) -> None:
    c.create("/log_dir_event_notification/log_dir_event_0000000004",
             _j({"version": 1, "broker": 2, "event": 1}))


def _token(c: KazooClient) -> None:
    c.create("/delegation_token/tokens/tok-1", _j({
        "version": 3, "owner": "User%3Aalice", "tokenRequester": "User%3Aalice",
        "renewers": [], "issueTimestamp": 1, "maxTimestamp": 3, "expiryTimestamp": 2,
        "tokenId": "tok-1"}), makepath=True)


BLOCKERS: list[tuple[str, Callable[[KazooClient], None], tuple[str, ...], str, str]] = [
    ("topic-without-id", _topic_without_id, (), "TOPIC_WITHOUT_ID", "/brokers/topics/legacy"),
    ("broker-not-registered", _broker_not_registered, (), "BROKER_NOT_REGISTERED",
     "/brokers/topics/stranded"),
    ("log-dir-event", _log_dir_event, (), "LOG_DIR_EVENT_PENDING",
     "/log_dir_event_notification/log_dir_event_0000000004"),
    # tokens need metadata.version 3.6-IV2; 3.6-IV1 is the lowest an online cutover takes
    ("metadata-version-too-low", _token, ("--metadata-version", "3.6-IV1"),
     "TOKENS_NEED_NEWER_METADATA_VERSION", "/delegation_token/tokens/tok-1"),
]


def _dump(c: KazooClient, path: str = "/") -> dict[str, tuple[bytes, int]]:
    """Every znode under `path`: its data and version (ZooKeeper unchanged = equal dumps)."""
    data, stat = c.get(path)
    out = {path: (data, stat.version)}
    for child in c.get_children(path):
        out.update(_dump(c, f"{path.rstrip('/')}/{child}"))
    return out


@pytest.fixture
def connect(zk_server: Any, zk_chroot: str) -> str:
    return f"{zk_server.connect}{zk_chroot}"


@pytest.mark.parametrize(("make", "extra", "code", "path"), [b[1:] for b in BLOCKERS],
                         ids=[b[0] for b in BLOCKERS])
def test_a_blocker_refuses_migrate_standin_before_any_vote_with_nothing_written(
    zk_chroot_client: KazooClient, connect: str, tmp_path: Path,
    make: Callable[[KazooClient], None], extra: tuple[str, ...], code: str, path: str
) -> None:
    _healthy_tree(zk_chroot_client)
    make(zk_chroot_client)
    before = _dump(zk_chroot_client)
    work = tmp_path / "work"
    work.mkdir()
    journal = tmp_path / "journal"
    flags = ["--zookeeper", connect, "--zk-timeout", "10",
             "--standin", f"3000@127.0.0.1:{free_port()}={work / 'standin'}",
             "--controller", f"3001@127.0.0.1:{free_port()}",
             "--controller", f"3002@127.0.0.1:{free_port()}", *extra]
    cli = [sys.executable, "-m", "migrate.cli"]
    migrated = subprocess.run([*cli, "migrate", *flags, "--cutover", "now",
                               "--journal", str(journal), "--json", str(tmp_path / "m.json")],
                              capture_output=True, text=True, timeout=90, cwd=ROOT)
    assert migrated.returncode == 1, migrated.stdout + migrated.stderr
    said = " ".join(migrated.stderr.split())
    assert f"{code} {path}:" in said, migrated.stderr
    assert "nothing was written" in said
    assert "asking" not in migrated.stdout + migrated.stderr  # no vote was asked for
    # the report names it as plan --json does, and nothing else was written anywhere
    doc = json.loads((tmp_path / "m.json").read_text())
    assert [(b["code"], b["path"]) for b in doc["blockers"]] == [(code, path)]
    assert doc["transport"]["kind"] == "standin"
    assert _dump(zk_chroot_client) == before
    assert list(work.iterdir()) == []
    assert not journal.exists()
    # plan --standin judges the same tree the same way
    planned = subprocess.run([*cli, "plan", *flags, "--json", "-"], capture_output=True,
                             text=True, timeout=90, cwd=ROOT)
    assert planned.returncode == 1, planned.stderr
    blockers = json.loads(planned.stdout)["blockers"]
    assert [(b["code"], b["path"]) for b in blockers] == [(code, path)]


def test_local_voters_are_judged_before_the_journal_or_a_voter_file_is_written(
    zk_chroot_client: KazooClient, connect: str, tmp_path: Path
) -> None:
    # --voter dirs: the same judgement, at the same point (it used to come after the voters'
    # files and the journal were written, which a refused run then left behind)
    _healthy_tree(zk_chroot_client)
    _topic_without_id(zk_chroot_client)
    zk_chroot_client.delete("/migration")  # local voters: no controller ran to create it
    before = _dump(zk_chroot_client)
    voters = [tmp_path / f"c{n}" for n in (3000, 3001, 3002)]
    journal = tmp_path / "journal"
    migrated = subprocess.run(
        [sys.executable, "-m", "migrate.cli", "migrate", "--zookeeper", connect,
         "--zk-timeout", "10", *[f"--voter={3000 + i}={d}" for i, d in enumerate(voters)],
         "--cutover", "now", "--journal", str(journal)],
        capture_output=True, text=True, timeout=90, cwd=ROOT)
    assert migrated.returncode == 1, migrated.stdout + migrated.stderr
    assert "TOPIC_WITHOUT_ID /brokers/topics/legacy:" in " ".join(migrated.stderr.split())
    assert _dump(zk_chroot_client) == before
    assert not journal.exists()
    assert [d for d in voters if d.exists() and any(d.iterdir())] == []
