"""A fence still in flight when the re-run reads back: it applies later, and it is still ours.

Run 1 is killed (`fence_sent`) with its fence multi-op written to the socket, and a relay holds
that request back (tests/support/zk_proxy.py, `hold=True`: the connection and run 1's session
stay open, as in a congested network). Run 2 reads back "not applied", as it must: ZooKeeper has
not seen the fence. Then the relay delivers it and ZooKeeper applies it, with run 1's claim,
while run 2 stands at a test pause (`ZK2KRAFT_TEST_PAUSE_AT`) either before judging the tree or
before sending its own fence. Whichever step meets that claim next (run 2's judgement of a KRaft
`/controller`, run 2's own fence failing on it, or, when run 2 is killed right there, run 3's
read-back) must recognise it as this migration's fence from the journal's list of every claim
sent, finish the drain and never fence again. The uninterrupted run's record sequence, parity,
and `/controller_epoch` bumped once (the sample's 3 to 4) are the proof.

A claim that is not in the journal (same broker id, same kraftControllerEpoch, another
timestamp: another controller's) stays someone else's: the fence stops with exit 3, the re-run's
pre-flight refuses it as CONTROLLER_IS_KRAFT (exit 1), and ZooKeeper keeps that claim.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from samples import SampleSpec
from tests.fault.test_online_crash import (
    VOTERS,
    ZK2KRAFT,
    _is_fence,
    done,
    expected,
    log_records,
    migration_offset,
    verify_ok,
)
from tests.support.migration_cluster import claim_on_cutover
from tests.support.zk_proxy import LosingRelay

pytestmark = pytest.mark.slow

# The sample's ZooKeeper controller is broker 1 at /controller_epoch 3 (SampleSpec.clean).
SAMPLE_EPOCH = b"3"
FENCED_ONCE = b"4"


def run(connect: str, root: Path, *, crash: str | None = None, pause: str | None = None
        ) -> subprocess.Popen[str]:
    env = {**os.environ, "ZK2KRAFT_PRECOPY_CHUNK": "25"}
    if crash:
        env["ZK2KRAFT_CRASH_AT"] = crash
    if pause:
        env["ZK2KRAFT_TEST_PAUSE_AT"] = pause
    cmd = [*ZK2KRAFT, "migrate", "--zookeeper", connect, "--cutover", "now",
           *[f"--voter={v}={root / f'c{v}'}" for v in VOTERS],
           "--on-cutover", claim_on_cutover(connect),
           "--handoff-timeout", "20", "--json", str(root / "m.json")]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)


def wait_reached(proc: subprocess.Popen[str], gate: Path) -> None:
    deadline = time.monotonic() + 120
    while not Path(f"{gate}.reached").exists():
        assert proc.poll() is None, done(proc)
        assert time.monotonic() < deadline, "the run never reached its pause"
        time.sleep(0.05)


def claim_in(request: bytes) -> bytes:
    """The `/controller` claim inside a fence multi-op as it went over the wire."""
    found = re.search(rb'\{"version":2,"brokerid":3000,"timestamp":"\d+",'
                      rb'"kraftControllerEpoch":1\}', request)
    assert found is not None, request
    return found.group(0)


def controller(zk: KazooClient) -> bytes:
    zk.sync("/")
    return bytes(zk.get("/controller")[0])


def said(out: str, text: str) -> bool:
    return text in " ".join(out.split())


SECOND_RUNS = {
    # where run 2 stands when the held fence applies, and whether it is killed there
    "judges_the_tree": ("after_readback", None),
    "sends_its_own_fence": ("before_fence", None),
    "killed_before_its_own_fence": ("before_fence", "before_fence"),
}


@pytest.mark.parametrize("second_run", list(SECOND_RUNS))
def test_a_fence_applied_after_the_rerun_read_back_is_recognised_as_ours(
    sample_cluster: Callable[..., Any], tmp_path: Path, second_run: str
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=6, partitions_per_topic=3))
    want = expected(cluster.connect)
    zk = cluster.client
    point, crash = SECOND_RUNS[second_run]
    gate = tmp_path / "gate"
    with LosingRelay(cluster.connect, _is_fence, hold=True) as relay:
        code, out = done(run(relay.connect, tmp_path, crash="fence_sent"))
        assert code == -9 and "killing zk2kraft at fence_sent" in out, out
        assert relay.dropped.wait(30), "the relay never saw the fence"
        first = claim_in(relay.held)
        assert zk.get("/controller_epoch")[0] == SAMPLE_EPOCH  # held: not applied yet

        second = run(cluster.connect, tmp_path, crash=crash, pause=f"{point}:{gate}")
        wait_reached(second, gate)
        relay.release()
        deadline = time.monotonic() + 30
        while controller(zk) != first:
            assert time.monotonic() < deadline, "the held fence never applied"
            time.sleep(0.05)
        assert zk.get("/controller_epoch")[0] == FENCED_ONCE  # run 1's fence, applied now
        Path(f"{gate}.go").write_text("")
        code, out = done(second)
    assert said(out, "the previous run stopped before its fence applied (read back)"), out
    if crash is None:
        assert code == 0, out
        recognised = out
    else:
        assert code == -9 and "killing zk2kraft at before_fence" in out, out
        code, recognised = done(run(cluster.connect, tmp_path))
        assert code == 0, recognised
    assert said(recognised, "an earlier run's fence"), recognised
    assert said(recognised, "it is ours, so not fencing again"), recognised

    assert zk.get("/controller_epoch")[0] == FENCED_ONCE  # fenced exactly once
    assert log_records(tmp_path) == want
    assert migration_offset(zk) == len(want) - 1
    verify_ok(cluster.connect, tmp_path)
    code, out = done(run(cluster.connect, tmp_path))
    assert code == 0 and "this migration already finished" in out, out


FOREIGN = b'{"version":2,"brokerid":3000,"timestamp":"1700000000000","kraftControllerEpoch":1}'


def claim_as_another_controller(zk: KazooClient) -> None:
    """Kafka's own claim (`tryRegisterKRaftControllerAsActiveController`): /controller_epoch at
    its version + 1, the ZooKeeper controller's /controller replaced by a persistent claim."""
    epoch, stat = zk.get("/controller_epoch")
    tx = zk.transaction()
    tx.set_data("/controller_epoch", str(int(epoch) + 1).encode(), version=stat.version)
    tx.delete("/controller", version=zk.exists("/controller").version)
    tx.create("/controller", FOREIGN)
    assert all(r is True or not isinstance(r, Exception) for r in tx.commit())


def test_a_claim_not_in_the_journal_stays_another_controllers(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=6, partitions_per_topic=3))
    zk = cluster.client
    gate = tmp_path / "gate"
    with LosingRelay(cluster.connect, _is_fence) as relay:  # run 1's fence is lost for good
        code, out = done(run(relay.connect, tmp_path, crash="fence_sent"))
        assert code == -9, out
        # the relay's thread may parse the frame after the kill is seen: wait, bounded
        assert relay.dropped.wait(30), "the relay never saw the fence"
    second = run(cluster.connect, tmp_path, pause=f"before_fence:{gate}")
    wait_reached(second, gate)
    claim_as_another_controller(zk)
    Path(f"{gate}.go").write_text("")
    code, out = done(second)
    assert code == 3, out
    assert said(out, "another KRaft controller owns this cluster"), out
    assert not said(out, "an earlier run's fence"), out

    code, out = done(run(cluster.connect, tmp_path))
    assert code == 1, out
    assert "CONTROLLER_IS_KRAFT" in out, out
    assert controller(zk) == FOREIGN  # left as it was
    assert zk.get("/controller_epoch")[0] == FENCED_ONCE  # the other controller's bump only
    assert zk.exists("/migration") is None  # none of our fences applied
    doc = json.loads((tmp_path / "m.json").read_text())
    assert [b["code"] for b in doc["blockers"]] == ["CONTROLLER_IS_KRAFT"]
