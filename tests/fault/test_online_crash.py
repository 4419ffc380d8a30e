"""kill -9 of `migrate --cutover now` at 10 injection points, then a re-run: the resumed log
must hold exactly the records an uninterrupted run writes (nothing lost, duplicated or
reordered, checked on the decoded record sequence), `verify` must find parity, and ZooKeeper
must have been fenced exactly once (/controller_epoch = the sample's 3 + 1).

The crash hook is `ZK2KRAFT_CRASH_AT=<point>[:N]` (migrate/_online.py), which SIGKILLs the tool
at the Nth pass of the point: no cleanup runs, as with a real kill -9.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from migrate.translate import TranslationOptions, translate
from tests.support.churn import Churn
from tests.support.migration_cluster import claim_on_cutover
from writers import MetadataRecord, encode_record, open_log_source, parse_metadata_version
from zkreader import ConnectOptions, SampleSpec, open_session, read_cluster

pytestmark = pytest.mark.slow

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
VOTERS = (3000, 3001, 3002)


def run(connect: str, root: Path, *extra: str, crash: str | None = None,
        mode: str = "now") -> subprocess.Popen[str]:
    env = {**os.environ, "ZK2KRAFT_PRECOPY_CHUNK": "25"}
    if crash:
        env["ZK2KRAFT_CRASH_AT"] = crash
    cmd = [*ZK2KRAFT, "migrate", "--zookeeper", connect, "--cutover", mode,
           *[f"--voter={v}={root / f'c{v}'}" for v in VOTERS],
           "--on-cutover", claim_on_cutover(connect),
           "--handoff-timeout", "20", "--json", str(root / "m.json"), *extra]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)


def done(proc: subprocess.Popen[str]) -> tuple[int, str]:
    out, err = proc.communicate(timeout=300)
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
    cmd = [*ZK2KRAFT, "verify", "--zookeeper", connect,
           *[f"--voter={v}={root / f'c{v}'}" for v in VOTERS]]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


POINTS = ["precopy_batch:2", "before_fence", "fence_unjournaled", "after_fence", "mid_drain",
          "after_end_transaction", "before_migration", "after_migration", "during_on_cutover"]


@pytest.mark.parametrize("point", POINTS)
def test_kill_9_then_rerun_gives_the_uninterrupted_log(
    sample_cluster: Callable[..., Any], tmp_path: Path, point: str
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=6, partitions_per_topic=3))
    want = expected(cluster.connect)
    code, out = done(run(cluster.connect, tmp_path, crash=point))
    assert code == -9, out
    assert "killing zk2kraft at" in out
    code, out = done(run(cluster.connect, tmp_path))
    assert code == 0, out
    assert log_records(tmp_path) == want
    zk = cluster.client
    assert zk.get("/controller_epoch")[0] == b"4"  # fenced exactly once
    mig = json.loads(zk.get("/migration")[0])
    assert mig["kraft_metadata_offset"] == len(want) - 1
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
        types = []
        for e in open_log_source(tmp_path / "c3000").entries():
            types += [r.type for r in e.batch.records]
        assert types.count("BEGIN_TRANSACTION_RECORD") == 1
        assert types[-2:] == ["ZK_MIGRATION_STATE_RECORD", "END_TRANSACTION_RECORD"]
        assert len(records) == len(types)
        # a resume never re-writes a record the log already holds as its latest state
        assert_no_repeated_state(tmp_path)
        assert cluster.client.get("/controller_epoch")[0] == b"4"
        verify_ok(cluster.connect, tmp_path)


def assert_no_repeated_state(root: Path) -> None:
    from migrate._mirror_delta import record_key

    latest: dict[Any, bytes] = {}
    for e in open_log_source(root / "c3000").entries():
        for r in e.batch.records:
            if not isinstance(r, MetadataRecord):
                continue
            key = record_key(r)
            if key is None or r.type.startswith("REMOVE_") or r.type == "UNREGISTER_BROKER_RECORD":
                if key is not None:
                    latest.pop(key, None)
                continue
            data = encode_record(r)
            assert latest.get(key) != data, f"record written twice in a row: {r.type} {key}"
            latest[key] = data
