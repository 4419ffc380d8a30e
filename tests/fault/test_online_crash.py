"""kill -9 of `migrate --cutover now` at 12 injection points, then a re-run: the resumed log
must hold exactly the records an uninterrupted run writes (nothing lost, duplicated or
reordered, checked on the decoded record sequence), `verify` must find parity, and ZooKeeper
must have been fenced exactly once (/controller_epoch = the sample's 3 + 1).

The crash hook is `ZK2KRAFT_CRASH_AT=<point>[:N]` (migrate/online/phases/), which SIGKILLs the tool
at the Nth pass of the point: no cleanup runs, as with a real kill -9. Two points kill it with a
ZooKeeper multi-op in flight (`fence_sent`, `migration_sent`: written to the socket, its reply
never read): ZooKeeper then applies it without anyone hearing back, or, through a relay that
loses it on the way (tests/support/zk_proxy.py), never sees it; the re-run must read back which.
The same relay also cuts the connection with a multi-op in flight (request or reply lost) while
the tool lives on: it must read back which, and never send it again after it applied.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from migrate.translate.framing import TranslationOptions
from migrate.translate.translation import translate
from samples import SampleSpec
from tests.support.churn import Churn
from tests.support.cli_run import communicate
from tests.support.migration_cluster import claim_on_cutover
from tests.support.scram_restatement import RESTATEMENT, migration_types
from tests.support.zk_proxy import LosingRelay
from writers import MetadataRecord, encode_record, open_log_source, parse_metadata_version
from zkreader import ConnectOptions, open_session, read_cluster

pytestmark = pytest.mark.slow

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
VOTERS = (3000, 3001, 3002)


def run(connect: str, root: Path, *extra: str, crash: str | None = None,
        mode: str = "now", chunk: int = 25) -> subprocess.Popen[str]:
    env = {**os.environ, "ZK2KRAFT_PRECOPY_CHUNK": str(chunk)}
    if crash:
        env["ZK2KRAFT_CRASH_AT"] = crash
    cmd = [*ZK2KRAFT, "migrate", "--zookeeper", connect, "--cutover", mode,
           *[f"--voter={v}={root / f'c{v}'}" for v in VOTERS],
           "--on-cutover", claim_on_cutover(connect),
           "--handoff-timeout", "20", "--json", str(root / "m.json"), *extra]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)


def done(proc: subprocess.Popen[str]) -> tuple[int, str]:
    """The run's exit code and output; a run still going after 300 s fails the test with every
    thread's stack (`tests.support.cli_run`)."""
    out, err = communicate(proc, 300)
    return proc.returncode, out + err


def log_records(root: Path) -> list[bytes]:
    """The decoded record sequence of every voter (all must be identical)."""
    seqs = []
    for v in VOTERS:
        seq = []
        for e in open_log_source(root / f"c{v}").entries():
            seq += [encode_record(r) for r in e.batch.records]  # type: ignore[arg-type]
        seqs.append(seq)
    assert seqs[0] == seqs[1] == seqs[2]
    return seqs[0]


def expected(connect: str) -> list[bytes]:
    with open_session(ConnectOptions(connect)) as session:
        snapshot = read_cluster(session, watch=False)
    opts = TranslationOptions(parse_metadata_version("3.9-IV0"))
    return [encode_record(r) for r in translate(snapshot, opts).records]


def verify_ok(connect: str, root: Path) -> None:
    report = root / "verify.json"
    cmd = [*ZK2KRAFT, "verify", "--zookeeper", connect, "--json", str(report),
           *[f"--voter={v}={root / f'c{v}'}" for v in VOTERS]]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    doc = json.loads(report.read_text())
    assert doc["parity"] is True and doc["differences"] == [], doc["differences"][:5]


POINTS = ["precopy_batch:2", "before_fence", "fence_sent", "fence_unjournaled", "after_fence",
          "mid_drain", "after_end_transaction", "before_migration", "migration_sent",
          "after_migration", "during_on_cutover"]

# The sample's ZooKeeper controller is broker 1 at /controller_epoch 3 (SampleSpec.clean); our
# fence makes it 4 and claims /controller for voter 3000 with kraftControllerEpoch 1.
CLAIM = {"version": 2, "brokerid": 3000, "kraftControllerEpoch": 1}


def fenced(zk: Any) -> bool:
    """ZooKeeper holds our fence (read after a sync: every write it received is applied)."""
    zk.sync("/")
    claim = json.loads(zk.get("/controller")[0])
    return zk.get("/controller_epoch")[0] == b"4" and all(
        claim.get(k) == v for k, v in CLAIM.items())


def migration_offset(zk: Any) -> int:
    zk.sync("/")
    return int(json.loads(zk.get("/migration")[0])["kraft_metadata_offset"])


def wait_applied(what: str, applied: Callable[[], bool]) -> None:
    """The killed run's multi-op was written to ZooKeeper's socket: it applies, even though
    nobody reads its reply (the tool's session outlives the process until it times out)."""
    deadline = time.monotonic() + 60
    while not applied():
        assert time.monotonic() < deadline, f"the in-flight {what} never applied in ZooKeeper"
        time.sleep(0.1)


@pytest.mark.parametrize("point", POINTS)
def test_kill_9_then_rerun_gives_the_uninterrupted_log(
    sample_cluster: Callable[..., Any], tmp_path: Path, point: str
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=6, partitions_per_topic=3))
    want = expected(cluster.connect)
    code, out = done(run(cluster.connect, tmp_path, crash=point))
    assert code == -9, out
    assert "killing zk2kraft at" in out
    zk = cluster.client
    written = None
    if point == "fence_sent":
        wait_applied("fence", lambda: fenced(zk))
    if point == "migration_sent":
        wait_applied("/migration write", lambda: migration_offset(zk) == len(want) - 1)
        written = zk.get("/migration")[1].version
    code, out = done(run(cluster.connect, tmp_path))
    assert code == 0, out
    if point == "fence_sent":
        assert "the previous run's fence had applied (read back)" in out, out
    assert log_records(tmp_path) == want
    assert zk.get("/controller_epoch")[0] == b"4"  # fenced exactly once
    mig, stat = zk.get("/migration")
    assert json.loads(mig)["kraft_metadata_offset"] == len(want) - 1
    if written is not None:
        assert stat.version == written  # read back as applied: not written a second time
    verify_ok(cluster.connect, tmp_path)


def test_a_journal_in_the_form_written_before_the_phase_enum_resumes(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    """Killed just after its fence, the run's journal is replaced by one written field by field
    the way main at 11b560c wrote it (phase as the plain string "fencing", the same keys in the
    same order, indent 2): the re-run reads back the fence, finishes the drain and ends at
    "done", with the log and ZooKeeper exactly as after an uninterrupted run."""
    cluster = sample_cluster(SampleSpec.clean(topics=6, partitions_per_topic=3))
    want = expected(cluster.connect)
    code, out = done(run(cluster.connect, tmp_path, crash="after_fence"))
    assert code == -9, out
    path = tmp_path / ".zk2kraft-journal" / "journal.json"
    crashed = json.loads(path.read_text())
    old_form = {"phase": "fencing", "cluster_id": crashed["cluster_id"],
                "voters": [3000, 3001, 3002], "leader_epoch": 1,
                "last_durable_offset": crashed["last_durable_offset"],
                "claim": crashed["claim"], "claims": [crashed["claim"]], "fence": None,
                "migration_zk_version": None, "facts": {}}
    path.write_text(json.dumps(old_form, indent=2))
    code, out = done(run(cluster.connect, tmp_path))
    assert code == 0, out
    assert "resuming in phase fencing" in out, out
    assert "the previous run's fence had applied (read back)" in out, out
    assert log_records(tmp_path) == want
    assert cluster.client.get("/controller_epoch")[0] == b"4"  # fenced exactly once
    assert json.loads(path.read_text())["phase"] == "done"
    verify_ok(cluster.connect, tmp_path)


def _is_fence(multi: bytes) -> bool:
    return b"kraftControllerEpoch" in multi


def _is_migration_write(multi: bytes) -> bool:
    # the fence writes /migration with no offset yet (-1); the write after the drain names one
    return b'"kraft_metadata_offset":' in multi and b'"kraft_metadata_offset":-1' not in multi


@pytest.mark.parametrize("point", ["fence_sent", "migration_sent"])
def test_kill_9_with_the_multi_op_lost_on_the_way(
    sample_cluster: Callable[..., Any], tmp_path: Path, point: str
) -> None:
    """The multi-op left the tool but ZooKeeper never got it (a relay loses it), then kill -9:
    the re-run reads back that it did not apply and sends it (once) itself."""
    cluster = sample_cluster(SampleSpec.clean(topics=6, partitions_per_topic=3))
    want = expected(cluster.connect)
    zk = cluster.client
    drop = _is_fence if point == "fence_sent" else _is_migration_write
    with LosingRelay(cluster.connect, drop) as relay:
        code, out = done(run(relay.connect, tmp_path, crash=point))
        assert code == -9, out
        assert f"killing zk2kraft at {point}" in out, out
        assert relay.dropped.wait(30), "the relay never saw the multi-op"
    if point == "fence_sent":
        assert zk.get("/controller_epoch")[0] == b"3"  # the sample's: not fenced
        assert json.loads(zk.get("/controller")[0])["brokerid"] == 1
        assert zk.exists("/migration") is None
    else:
        assert fenced(zk)
        assert migration_offset(zk) == -1  # as the fence left it
    before = zk.get("/migration")[1].version if zk.exists("/migration") else -1
    code, out = done(run(cluster.connect, tmp_path))
    assert code == 0, out
    if point == "fence_sent":
        assert "the previous run stopped before its fence applied (read back)" in out, out
    assert log_records(tmp_path) == want
    assert zk.get("/controller_epoch")[0] == b"4"  # fenced exactly once
    mig, stat = zk.get("/migration")
    assert json.loads(mig)["kraft_metadata_offset"] == len(want) - 1
    if point == "migration_sent":
        assert stat.version == before + 1  # written once, by the re-run
    verify_ok(cluster.connect, tmp_path)


def test_kill_9_mid_mirror_keeps_the_change_once_in_order(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=6, partitions_per_topic=3))
    before = expected(cluster.connect)
    proc = run(cluster.connect, tmp_path, crash="mirror_append", mode="manual")
    journal = tmp_path / ".zk2kraft-journal" / "journal.json"
    deadline = time.monotonic() + 120
    while not (journal.exists() and json.loads(journal.read_text())["phase"] == "mirror"):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    zk = cluster.client
    topic = sorted(zk.get_children("/brokers/topics"))[0]
    zk.set(f"/config/topics/{topic}", b'{"version":1,"config":{"retention.ms":"123"}}')
    code, out = done(proc)
    assert code == -9 and "mirror_append" in out, out
    code, out = done(run(cluster.connect, tmp_path))
    assert code == 0, out
    change = encode_record(MetadataRecord("CONFIG_RECORD", 0, {
        "resourceType": 2, "resourceName": topic, "name": "retention.ms", "value": "123"}))
    got = log_records(tmp_path)
    # pre-copy (without the trailer), the mirrored change exactly once, then the trailer;
    # topic configs of other topics are untouched by the change
    assert got[:len(before) - 2] == before[:-2]
    assert got[len(before) - 2:] == [change, *before[-2:]] or (
        # the sample may already hold other keys of that topic's config: the set replaced them
        got[-2:] == before[-2:] and got.count(change) == 1)
    verify_ok(cluster.connect, tmp_path)


def test_kill_9_under_churn_resumes_with_parity(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=6, partitions_per_topic=3))
    with Churn(cluster.connect, rate=200) as churn:
        churn.wait_changes(50)
        code, out = done(run(cluster.connect, tmp_path, crash="mirror_append"))
        assert code == -9, out
        code, out = done(run(cluster.connect, tmp_path, crash="mid_drain"))
        assert code == -9, out
        code, out = done(run(cluster.connect, tmp_path))
        assert code == 0, out
        assert churn.fenced.is_set()
        churn.stop()
        assert churn.errors == []
        records = log_records(tmp_path)
        all_types = []
        for e in open_log_source(tmp_path / "c3000").entries():
            all_types += [r.type for r in e.batch.records]
        types = migration_types(all_types)  # the churn may remove a SCRAM user: restatement
        assert types.count("BEGIN_TRANSACTION_RECORD") == 1
        assert types[-2:] == ["ZK_MIGRATION_STATE_RECORD", "END_TRANSACTION_RECORD"]
        assert len(records) == len(all_types)
        # a resume never re-writes a record the log already holds as its latest state
        assert_no_repeated_state(tmp_path)
        assert cluster.client.get("/controller_epoch")[0] == b"4"
        verify_ok(cluster.connect, tmp_path)


def record_key(record: MetadataRecord) -> tuple[Any, ...] | None:
    """What a later record of the same identity replaces (Kafka's record definitions): topic
    by id, partition by (topic id, partition), config by (resource, key), quota by (entity,
    key), SCRAM by (user, mechanism), ACL by id, token by id, broker by id; None for framing."""
    d = record.data
    t = record.type
    if t == "FEATURE_LEVEL_RECORD":
        return ("feature", d["name"])
    if t in ("REGISTER_BROKER_RECORD", "UNREGISTER_BROKER_RECORD"):
        return ("broker", d["brokerId"])
    if t in ("TOPIC_RECORD", "REMOVE_TOPIC_RECORD"):
        return ("topic", d["topicId"])
    if t in ("PARTITION_RECORD", "PARTITION_CHANGE_RECORD"):
        return ("partition", d["topicId"], d["partitionId"])
    if t == "CONFIG_RECORD":
        return ("config", d["resourceType"], d["resourceName"], d["name"])
    if t == "CLIENT_QUOTA_RECORD":
        return ("quota", repr(d["entity"]), d["key"])
    if t in ("USER_SCRAM_CREDENTIAL_RECORD", "REMOVE_USER_SCRAM_CREDENTIAL_RECORD"):
        return ("scram", d["name"], d["mechanism"])
    if t == "PRODUCER_IDS_RECORD":
        return ("producer_ids",)
    if t in ("ACCESS_CONTROL_ENTRY_RECORD", "REMOVE_ACCESS_CONTROL_ENTRY_RECORD"):
        return ("acl", d["id"])
    if t in ("DELEGATION_TOKEN_RECORD", "REMOVE_DELEGATION_TOKEN_RECORD"):
        return ("token", d["tokenId"])
    return None


def assert_no_repeated_state(root: Path) -> None:
    latest: dict[Any, bytes] = {}
    restating = False
    for e in open_log_source(root / "c3000").entries():
        for r in e.batch.records:
            if not isinstance(r, MetadataRecord):
                continue
            # The SCRAM restatement after the migration transaction repeats the live
            # credentials on purpose (tests/support/scram_restatement.py says why).
            if r.type == "BEGIN_TRANSACTION_RECORD":
                restating = r.data.get("name") == RESTATEMENT
            if restating:
                restating = r.type != "END_TRANSACTION_RECORD"
                continue
            key = record_key(r)
            if key is None or r.type.startswith("REMOVE_") or r.type == "UNREGISTER_BROKER_RECORD":
                if key is not None:
                    latest.pop(key, None)
                continue
            if r.type == "PARTITION_CHANGE_RECORD":
                # Not a state but a step: each replay bumps the partition epoch (and the leader
                # epoch when it names a leader), so two identical ones in a row are right when
                # ZooKeeper re-elected the same leader twice, as the churn does. A step written
                # twice by a resume shows instead as an epoch above ZooKeeper's, which verify
                # (run below) judges.
                continue
            data = encode_record(r)
            assert latest.get(key) != data, f"record written twice in a row: {r.type} {key}"
            latest[key] = data


def wait_for_phase(proc: subprocess.Popen[str], root: Path, phase: str) -> None:
    journal = root / ".zk2kraft-journal" / "journal.json"
    deadline = time.monotonic() + 120
    while not (journal.exists() and json.loads(journal.read_text())["phase"] == phase):
        assert time.monotonic() < deadline and proc.poll() is None, proc.poll()
        time.sleep(0.05)


def decoded(root: Path) -> list[MetadataRecord]:
    out: list[MetadataRecord] = []
    for e in open_log_source(root / "c3000").entries():
        out += [r for r in e.batch.records if isinstance(r, MetadataRecord)]
    return out


def has(records: list[MetadataRecord], rtype: str, **fields: object) -> bool:
    return any(r.type == rtype and all(r.data.get(k) == v for k, v in fields.items())
               for r in records)


def readable(root: Path) -> list[MetadataRecord]:
    """The log as far as it can be read while the tool appends to it."""
    try:
        return decoded(root)
    except Exception:  # noqa: BLE001 - a batch half-written: read again shortly
        return []


def count(records: list[MetadataRecord], rtype: str, fields: dict[str, object]) -> int:
    return sum(1 for r in records
               if r.type == rtype and all(r.data.get(k) == v for k, v in fields.items()))


def removals(topic_id: str | None, token_id: str, broker_epoch: int, acl_ids: list[str]
             ) -> list[tuple[str, dict[str, object]]]:
    """The removal records the deletions of the test below call for, from Kafka's record
    definitions (resource types: TOPIC 2, BROKER 4; SCRAM-SHA-512 is mechanism 2; a deleted
    config key is a ConfigRecord with a null value, a quota key a ClientQuotaRecord with
    remove=true; a broker's epoch is its znode's czxid)."""
    reporting = [{"entityType": "client-id", "entityName": "reporting-app"}]
    return [
        ("REMOVE_TOPIC_RECORD", {"topicId": topic_id}),
        ("CONFIG_RECORD", {"resourceType": 2, "resourceName": "topic-00004",
                           "name": "retention.ms", "value": None}),
        ("CONFIG_RECORD", {"resourceType": 4, "resourceName": "",
                           "name": "log.cleaner.threads", "value": None}),
        ("CONFIG_RECORD", {"resourceType": 4, "resourceName": "1",
                           "name": "log.cleaner.threads", "value": None}),
        ("CONFIG_RECORD", {"resourceType": 4, "resourceName": "1",
                           "name": "max.connections", "value": None}),
        ("CLIENT_QUOTA_RECORD", {"entity": reporting, "key": "producer_byte_rate",
                                 "remove": True}),
        ("CLIENT_QUOTA_RECORD", {"entity": reporting, "key": "controller_mutation_rate",
                                 "remove": True}),
        ("CLIENT_QUOTA_RECORD", {"entity": [{"entityType": "ip", "entityName": "192.168.10.5"}],
                                 "key": "connection_creation_rate", "remove": True}),
        ("REMOVE_USER_SCRAM_CREDENTIAL_RECORD", {"name": "bob", "mechanism": 2}),
        *[("REMOVE_ACCESS_CONTROL_ENTRY_RECORD", {"id": i}) for i in acl_ids],
        ("REMOVE_DELEGATION_TOKEN_RECORD", {"tokenId": token_id}),
        ("UNREGISTER_BROKER_RECORD", {"brokerId": EXTRA_BROKER, "brokerEpoch": broker_epoch}),
    ]


EXTRA_BROKER = 7
EXTRA_BROKER_JSON = (b'{"version":5,"host":"broker-7.kafka.local","port":9092,"jmx_port":-1,'
                     b'"timestamp":"1700000000007","endpoints":["PLAINTEXT://broker-7.kafka.'
                     b'local:9092"],"rack":"r1","listener_security_protocol_map":{"PLAINTEXT":'
                     b'"PLAINTEXT"},"features":{"metadata.version":{"min_version":1,'
                     b'"max_version":21}}}')


@pytest.mark.parametrize(("crash", "mode", "chunk"), [
    ("mirror_append", "manual", 25),   # killed mid-mirror, after a mirrored change
    ("precopy_batch", "now", 10**6),   # killed after the pre-copy's (only) batch, before `mirror`
])
def test_entities_deleted_while_down_get_their_removal_records(
    sample_cluster: Callable[..., Any], tmp_path: Path, crash: str, mode: str, chunk: int
) -> None:
    """Whatever ZooKeeper dropped while the tool was down (a topic, config keys and entities,
    quota entities, a SCRAM user, ACL resources, a token, a broker) gets its removal record as
    soon as the re-run resumes, before any cutover: the resume re-reads the whole tree, diffs
    every entity the log or ZooKeeper holds, and arms its watches again."""
    cluster = sample_cluster(SampleSpec.clean(topics=6, partitions_per_topic=3))
    zk = cluster.client
    zk.create(f"/brokers/ids/{EXTRA_BROKER}", EXTRA_BROKER_JSON, ephemeral=True)
    broker_epoch = zk.exists(f"/brokers/ids/{EXTRA_BROKER}").czxid
    proc = run(cluster.connect, tmp_path, crash=crash, mode=mode, chunk=chunk)
    if crash == "mirror_append":
        wait_for_phase(proc, tmp_path, "mirror")
        zk.set("/config/topics/topic-00000", b'{"version":1,"config":{"retention.ms":"123"}}')
    code, out = done(proc)
    assert code == -9 and f"killing zk2kraft at {crash}" in out, out
    held = decoded(tmp_path)
    acl_ids = [r.data["id"] for r in held if r.type == "ACCESS_CONTROL_ENTRY_RECORD" and (
        (r.data["resourceType"], r.data["resourceName"]) == (3, "billing")  # GROUP, literal
        or (r.data["resourceName"], r.data["patternType"]) == ("orders-", 4))]  # PREFIXED
    assert len(acl_ids) == 3  # the sample: 1 ACL on Group billing, 2 on Topic orders- prefixed

    # while the tool is down, ZooKeeper loses one entity of every kind (and some keys)
    topic_id = cluster.manifest.topic_ids["topic-00001"]
    (token_id,) = zk.get_children("/delegation_token/tokens")
    zk.delete("/brokers/topics/topic-00001", recursive=True)
    zk.delete("/config/topics/topic-00001")
    zk.set("/config/topics/topic-00004", b'{"version":1,"config":{}}')  # retention.ms gone
    zk.set("/config/brokers/<default>",
           b'{"version":1,"config":{"log.retention.check.interval.ms":"300000"}}')
    zk.delete("/config/brokers/1")
    zk.delete("/config/clients/reporting-app")
    zk.delete("/config/ips/192.168.10.5")
    zk.delete("/config/users/bob")  # bob had SCRAM-SHA-512 only
    zk.delete("/kafka-acl/Group/billing")
    zk.delete("/kafka-acl-extended/prefixed/Topic/orders-")
    zk.delete(f"/delegation_token/tokens/{token_id}")
    zk.delete(f"/brokers/ids/{EXTRA_BROKER}")
    wanted = removals(topic_id, token_id, broker_epoch, acl_ids)

    # the resumed mirror writes the removals before any cutover is asked for ...
    proc = run(cluster.connect, tmp_path, mode="manual")
    deadline = time.monotonic() + 120
    while any(count(readable(tmp_path)[len(held):], t, f) == 0 for t, f in wanted):
        assert proc.poll() is None and time.monotonic() < deadline, \
            "the resumed mirror did not write every removal record:\n" + \
            "\n".join(repr(w) for w in wanted if count(decoded(tmp_path)[len(held):], *w) == 0)
        time.sleep(0.2)
    # ... and has its watches armed again: a change now is mirrored before the cutover too
    zk.set("/config/topics/topic-00002", b'{"version":1,"config":{"retention.ms":"456"}}')
    change = ("CONFIG_RECORD", {"resourceType": 2, "resourceName": "topic-00002",
                                "name": "retention.ms", "value": "456"})
    while count(readable(tmp_path)[len(held):], *change) == 0:
        assert proc.poll() is None and time.monotonic() < deadline, \
            "a change made after the resume was not mirrored"
        time.sleep(0.2)
    proc.send_signal(signal.SIGUSR1)
    code, out = done(proc)
    assert code == 0, out
    assert json.loads((tmp_path / "m.json").read_text())["delta_records"] == 0  # caught up
    tail = decoded(tmp_path)[len(held):]
    for t, f in [*wanted, change]:
        assert count(tail, t, f) == 1, (t, f)  # each exactly once
    assert count(tail, "TOPIC_RECORD", {"name": "topic-00001"}) == 0
    # bob's SCRAM removal is in the migration transaction: the live credentials follow it, restated
    all_types = [r.type for r in decoded(tmp_path)]
    assert migration_types(all_types) != all_types
    tail_types = migration_types(all_types)[len(held):]
    assert tail_types[-2:] == ["ZK_MIGRATION_STATE_RECORD", "END_TRANSACTION_RECORD"]
    assert "BEGIN_TRANSACTION_RECORD" not in tail_types
    verify_ok(cluster.connect, tmp_path)


@pytest.mark.parametrize("multi_op", ["fence", "/migration"])
@pytest.mark.parametrize("lost", ["request", "reply"])
def test_connection_lost_with_the_multi_op_in_flight(
    sample_cluster: Callable[..., Any], tmp_path: Path, multi_op: str, lost: str
) -> None:
    """No kill: the connection dies with the multi-op in flight, its request lost on the way
    (not applied) or its reply (applied). The tool reconnects and reads back which; it never
    sends it again after it applied. A fence that did not apply is left to a re-run (its
    message says so); a /migration write that did not apply is sent again, once."""
    cluster = sample_cluster(SampleSpec.clean(topics=6, partitions_per_topic=3))
    want = expected(cluster.connect)
    zk = cluster.client
    drop = _is_fence if multi_op == "fence" else _is_migration_write
    with LosingRelay(cluster.connect, drop, cut=True, deliver=lost == "reply") as relay:
        code, out = done(run(relay.connect, tmp_path))
        assert relay.dropped.is_set(), out
    assert "reply was lost" in out, out  # the tool saw the connection die with it in flight
    if multi_op == "fence" and lost == "request":
        assert code == 3, out
        assert "the read-back shows it did not apply" in " ".join(out.split()), out
        assert zk.get("/controller_epoch")[0] == b"3"  # the sample's: not fenced
        code, out = done(run(cluster.connect, tmp_path))
    assert code == 0, out
    assert log_records(tmp_path) == want
    assert zk.get("/controller_epoch")[0] == b"4"  # fenced exactly once
    mig, stat = zk.get("/migration")
    assert json.loads(mig)["kraft_metadata_offset"] == len(want) - 1
    # the sample has no /migration: the fence creates it (version 0), the write after the
    # drain sets it once (version 1), whether its first send applied or not
    assert stat.version == 1
    verify_ok(cluster.connect, tmp_path)


def test_a_rerun_past_the_fence_with_a_bootstrap_server_finishes_without_the_canary(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    """Issue 16: after a kill past the fence, the re-run the advice asks for may carry
    `--bootstrap-server`. ZooKeeper's controller is fenced then, so the canary's warm-up cannot
    pass (here no broker answers at all). The re-run must still finish the migration from its
    journal, say why it goes on without the canary, and end honestly: nothing confirms a
    serving cluster, so exit 4 (it exited 3 at the warm-up, /migration never written). A
    further re-run repeats exit 4 (it said "already completed", exit 0)."""
    from tests.support.ports import free_port

    cluster = sample_cluster(SampleSpec.clean(topics=2, partitions_per_topic=2))
    want = expected(cluster.connect)
    code, out = done(run(cluster.connect, tmp_path, crash="after_fence"))
    assert code == -9, out
    zk = cluster.client
    assert fenced(zk)
    nowhere = f"127.0.0.1:{free_port()}"
    code, out = done(run(cluster.connect, tmp_path, "--bootstrap-server", nowhere))
    said = " ".join(out.split())
    assert "going on without the canary" in said, said
    assert migration_offset(zk) == len(want) - 1, said  # the migration finished
    assert log_records(tmp_path) == want
    assert zk.get("/controller_epoch")[0] == b"4"  # fenced exactly once
    assert code == 4, said  # no broker confirmed serving after the handoff
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["status"] == "unconfirmed", doc
    assert "Traceback" not in said
    # the same command again finds the migration done: it repeats that verdict, exit 4 with
    # the same problems, never a bare "already completed" exit 0 (as it did before)
    codes = [p["code"] for p in doc["problems"]]
    code, out = done(run(cluster.connect, tmp_path))
    said = " ".join(out.split())
    assert code == 4, said
    again = json.loads((tmp_path / "m.json").read_text())
    assert (again["status"], [p["code"] for p in again["problems"]]) == ("unconfirmed", codes)
    assert "does not ask Kafka again" in said, said
