"""The online run's driver and phases on in-memory fakes (tests/support/fake_online.py): every
phase's outcome, every resume point, every refusal, in milliseconds and with no ZooKeeper.

The real-ZooKeeper tests (tests/integration/test_online_*, tests/fault/test_online_*) stay: these
add speed and precision. Expected values are written from the design (docs/design/online-run.md:
the phases, the journal's entries, "never fence twice", t0/t1/t2) and the journal
format (`migrate/online/journal.py`'s docstring), not read back from the code under test.
"""

from __future__ import annotations

import ast
import dataclasses
import gc
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from migrate.bulk.voters import VoterTarget
from migrate.errors import BlockersFoundError
from migrate.online.fence_status import ZkFence, fence_of
from migrate.online.journal import Journal
from migrate.online.options import OnlineOptions
from migrate.online.outcome import CutoverRequest, OnlineOutcome, StatusSink
from migrate.online.phases import Phase, Stop
from migrate.online.phases.context import Preflight, RunContext, judge_tree, translation_options
from migrate.online.phases.resume import our_applied_fence
from migrate.online.run import _Run
from migrate.translate.framing import parse_target_version
from tests.support.fake_online import Crash, FakeClock, FakeFeed, FakeQuorum, FakeZooKeeper
from tests.support.snapshots import CLUSTER_ID, full_snapshot, mk_broker, st
from writers import MetadataRecord, VoterStateError, VoterUnavailableError
from zkreader import (
    ChangeEvent,
    ConnectOptions,
    ControllerMovedError,
    ControllerZnode,
    EntityKey,
    FenceState,
    LogDirEvent,
    MigrationMovedError,
    ZkUnreachableError,
    ZnodeStat,
)

ROOT = Path(__file__).resolve().parents[3]
VOTER = 3000
MV = "3.9-IV0"
# a fresh run, from the design: the claim is journaled before the fence; nothing between the
# fence and the drain; /migration journaled with the handoff's beginning; then done
FRESH = ["mirror", "fencing", "drained", "handoff", "done"]
HEADER = ["FEATURE_LEVEL_RECORD", "BEGIN_TRANSACTION_RECORD"]
TRAILER = ["ZK_MIGRATION_STATE_RECORD", "END_TRANSACTION_RECORD"]


class RecordingJournal(Journal):
    """The journal, noting every phase it enters (the file is the real one)."""

    entered: list[str]

    def enter(self, phase: Phase, **changes: Any) -> None:
        super().enter(phase, **changes)
        self.__dict__.setdefault("entered", []).append(phase.value)


class Sink(StatusSink):
    def __init__(self) -> None:
        self.lines: list[str] = []

    def say(self, line: str) -> None:
        self.lines.append(line)


class Cluster:
    """One migration: ZooKeeper and the voters (the fakes) and the journal's directory, which
    outlive a run, so `run` again is the operator's re-run."""

    def __init__(self, tmp_path: Path, **options: Any) -> None:
        self.zk = FakeZooKeeper(tree=full_snapshot())
        self.quorum = FakeQuorum()
        self.clock = FakeClock()
        self.options = OnlineOptions(
            connect=ConnectOptions("127.0.0.1:1"), voters=(VoterTarget(VOTER, tmp_path / "v"),),
            metadata_version=parse_target_version(MV), cutover="now",
            journal_dir=tmp_path / "journal", **options)
        self.sink = Sink()
        self.trigger = CutoverRequest()  # the operator's signal (`--cutover manual`)
        self.journal: RecordingJournal | None = None
        self.released = 0

    def run(self, preflight: Preflight | None = None) -> OnlineOutcome | Stop:
        """One run, as `run_online` makes it once the voters are open: a fresh run judges the
        tree first and saves the journal at `precopy`; a re-run loads the journal."""
        self.sink.lines.clear()
        self.zk.expired.clear()
        loaded = RecordingJournal.load(self.options.journal_dir)
        assert loaded is None or isinstance(loaded, RecordingJournal)
        journal = loaded
        if journal is None:
            if preflight is None:
                snapshot = self.zk.read_cluster(watch=True)
                preflight = Preflight(snapshot, judge_tree(
                    self.options, translation_options(self.options), snapshot))
            journal = RecordingJournal(self.options.journal_dir, cluster_id=CLUSTER_ID,
                                       voters=[VOTER], leader_epoch=1)
            journal.save()
        self.journal = journal
        clocks = self.clock.clocks()
        c = RunContext(self.options, self.zk, self.quorum, journal, self.sink,
                       clock=clocks.monotonic, wall=clocks.wall, sleep=clocks.sleep,
                       trigger=self.trigger, release_locks=self._release)
        return _Run(c, preflight).run()

    def finish(self) -> OnlineOutcome:
        out = self.run()
        assert isinstance(out, OnlineOutcome)
        return out

    def crash(self) -> None:
        """A run that dies (`Crash`) where the fakes were told to."""
        with pytest.raises(Crash):
            self.run()

    def _release(self) -> None:
        self.released += 1

    @property
    def entered(self) -> list[str]:
        assert self.journal is not None
        return list(self.journal.__dict__.get("entered", []))

    def on_disk(self) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads((self.options.journal_dir / "journal.json").read_text())
        return doc

    def types(self) -> list[str]:
        return [r.type for r in self.quorum.records() if isinstance(r, MetadataRecord)]

    def said(self, start: str) -> list[str]:
        return [line for line in self.sink.lines if line.startswith(start)]


@pytest.fixture(autouse=True)
def _unfreeze() -> Iterator[None]:
    """The run freezes the heap before its fence (`gc.freeze`, for the rest of the process);
    a test's process goes on, so what the run froze is handed back to the collector."""
    frozen = gc.get_freeze_count()
    yield
    if frozen == 0:
        gc.unfreeze()


@pytest.fixture
def cluster(tmp_path: Path) -> Cluster:
    return Cluster(tmp_path)


def _brokers_registered(types: list[str]) -> int:
    return types.count("REGISTER_BROKER_RECORD")


# -- a fresh run: each phase's outcome ------------------------------------------------------


def test_a_fresh_run_journals_every_phase_in_the_designs_order(cluster: Cluster) -> None:
    out = cluster.finish()
    assert cluster.entered == FRESH
    assert cluster.on_disk()["phase"] == "done"
    assert out.resumed_from is None and not out.already_done


def test_the_log_is_header_copy_then_trailer_each_once(cluster: Cluster) -> None:
    cluster.finish()
    types = cluster.types()
    assert types[:2] == HEADER and types[-2:] == TRAILER
    assert types.count("BEGIN_TRANSACTION_RECORD") == 1
    assert types.count("END_TRANSACTION_RECORD") == 1
    assert _brokers_registered(types) == 3  # full_snapshot's brokers 1, 2 and 10
    assert types.count("TOPIC_RECORD") == 2  # orders and alpha; doomed is pending deletion


def test_the_fence_is_sent_once_and_the_journal_keeps_zookeepers_token(cluster: Cluster) -> None:
    cluster.finish()
    assert cluster.zk.fences_sent == 1
    doc = cluster.on_disk()
    # /controller_epoch 5 at version 4 before the fence: the fence makes it 6 at version 5
    assert doc["fence"]["controller_epoch"] == 6 and doc["fence"]["epoch_zk_version"] == 5
    assert doc["claims"] == [doc["claim"]]
    assert cluster.zk.controller == doc["claim"].encode()
    claim = json.loads(doc["claim"])
    assert claim["brokerid"] == VOTER and claim["kraftControllerEpoch"] == 1


def test_migration_names_the_logs_last_offset(cluster: Cluster) -> None:
    out = cluster.finish()
    assert cluster.zk.migration_writes == 1
    assert cluster.zk.migration is not None
    written = json.loads(cluster.zk.migration)
    assert written["kraft_metadata_offset"] == cluster.quorum.last_offset == out.last_offset
    assert out.migration_zk_version == cluster.zk.migration_version
    assert cluster.on_disk()["migration_zk_version"] == cluster.zk.migration_version


def test_the_operator_reads_the_steps_in_order(cluster: Cluster) -> None:
    cluster.finish()
    starts = ["pre-copy: writing", "pre-copy durable on a majority", "mirroring until caught up",
              "cutting over: ZooKeeper session CONNECTED", "fenced: /controller_epoch is now 6",
              "drained: 0 final delta record(s)", "/migration written",
              "no --on-cutover: start the KRaft controllers now"]
    at = [next(i for i, line in enumerate(cluster.sink.lines) if line.startswith(s))
          for s in starts]
    assert at == sorted(at)


def test_a_manual_signal_is_acknowledged_before_the_cutover(cluster: Cluster) -> None:
    cluster.options = dataclasses.replace(cluster.options, cutover="manual")
    cluster.trigger.set()  # SIGUSR1 (or Enter) came while the run was mirroring
    cluster.finish()
    lines = cluster.sink.lines
    asked = [i for i, line in enumerate(lines) if line.startswith("cutover asked")]
    cutting = [i for i, line in enumerate(lines) if line.startswith("cutting over")]
    assert len(asked) == 1 and len(cutting) == 1 and asked[0] < cutting[0], lines


def test_cutover_now_needs_no_acknowledgement(cluster: Cluster) -> None:
    cluster.finish()
    assert not cluster.said("cutover asked"), cluster.sink.lines


def test_local_voters_are_released_for_the_controllers_at_the_handoff(cluster: Cluster) -> None:
    cluster.finish()
    assert cluster.released == 1


def test_the_window_is_read_from_the_recorded_stamps(cluster: Cluster) -> None:
    out = cluster.finish()
    t0, t1 = out.stamps["fence"], out.stamps["drained"]
    assert t0 > 1000.0 and t1 > t0  # the injected clock's readings
    assert out.window_tool_ms == pytest.approx((t1 - t0) * 1000.0)
    assert out.window_total_ms is None  # no KRaft controller claimed /controller
    assert cluster.on_disk()["facts"]["window_ms"]["total"] is None


def test_the_claims_timestamp_is_the_injected_wall_clock(cluster: Cluster) -> None:
    out = cluster.finish()
    claim = json.loads(cluster.on_disk()["claim"])
    assert out.fence_wall_s is not None
    assert int(claim["timestamp"]) == round(out.fence_wall_s * 1000)
    assert 1_700_000_000 < out.fence_wall_s < 1_700_000_100


def test_a_kraft_controllers_claim_ends_the_window_t2(tmp_path: Path) -> None:
    cluster = Cluster(tmp_path, on_cutover="true", handoff_timeout_s=5.0)
    cluster.zk.takeover_at_handoff = True
    out = cluster.finish()
    assert "a KRaft controller claimed /controller: handoff complete" in cluster.sink.lines
    assert out.window_total_ms is not None and out.window_tool_ms is not None
    assert out.window_total_ms > out.window_tool_ms
    assert out.stamps["claimed"] > out.stamps["drained"]


def test_a_change_notified_during_the_mirror_is_mirrored(cluster: Cluster) -> None:
    snapshot = cluster.zk.read_cluster(watch=True)
    preflight = Preflight(snapshot, judge_tree(cluster.options,
                                               translation_options(cluster.options), snapshot))
    cluster.zk.tree = replace(cluster.zk.tree, brokers={**cluster.zk.tree.brokers,
                                                        11: mk_broker(11, czxid=6000)})
    cluster.zk.changed["/brokers/ids/11"] = [EntityKey.broker(11)]
    cluster.zk.changes.queued.append(ChangeEvent("/brokers/ids/11", "CREATED", 0.0))
    out = cluster.run(preflight)
    assert isinstance(out, OnlineOutcome)
    assert out.mirrored_records == 1 and out.changes_seen == 1
    types = cluster.types()
    assert _brokers_registered(types) == 4
    assert types.index("REGISTER_BROKER_RECORD", types.index("BEGIN_TRANSACTION_RECORD")) < \
        types.index("ZK_MIGRATION_STATE_RECORD")


class LaggingFeed(FakeFeed):
    """Changes that never stop, each 5 s old when the mirror gets it: a host too slow to catch
    up with a steady stream of changes."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__()
        self.clock = clock

    def get(self, timeout: float | None = None) -> ChangeEvent | None:
        return ChangeEvent("/config/topics/t", "CHANGED", self.clock.now - 5.0)


def test_a_mirror_that_never_catches_up_cuts_over_once_the_lag_wait_ran_out(
    tmp_path: Path
) -> None:
    cluster = Cluster(tmp_path, lag_wait_s=0.5)
    cluster.zk.changes = LaggingFeed(cluster.clock)
    out = cluster.finish()  # before the bound: mirrored for ever
    assert cluster.said("cutover waits: the mirror lags 5.0s behind ZooKeeper (it cuts over "
                        "once within 1s of it, or after 0.5s even so)"), cluster.sink.lines
    assert cluster.said("WARNING: 0.5s after the cutover was asked the mirror is still more "
                        "than 1s behind ZooKeeper"), cluster.sink.lines
    assert out.mirror_steps >= 2 and cluster.said("fenced: /controller_epoch is now 6")
    waited = out.phase_ms["gate"]
    assert 500.0 <= waited < 5000.0, out.phase_ms  # the bound, on the injected clock


def test_a_change_notified_before_the_fences_sync_goes_into_the_drain(cluster: Cluster) -> None:
    def broker_arrives() -> None:
        cluster.zk.tree = replace(cluster.zk.tree, brokers={**cluster.zk.tree.brokers,
                                                            12: mk_broker(12, czxid=6100)})
        cluster.zk.changed["/brokers/ids/12"] = [EntityKey.broker(12)]
        cluster.zk.changes.queued.append(ChangeEvent("/brokers/ids/12", "CREATED", 0.0))
    cluster.zk.hooks["sync"] = broker_arrives
    out = cluster.finish()
    assert out.delta_records == 1
    # the final delta goes in the one durable append with the trailer
    assert cluster.types()[-3:] == ["REGISTER_BROKER_RECORD", *TRAILER]
    assert cluster.said("drained: 1 final delta record(s)")


def test_a_session_expiry_rereads_the_whole_tree_loudly(cluster: Cluster) -> None:
    snapshot = cluster.zk.read_cluster(watch=True)
    preflight = Preflight(snapshot, judge_tree(cluster.options,
                                               translation_options(cluster.options), snapshot))
    cluster.zk.tree = replace(cluster.zk.tree, brokers={**cluster.zk.tree.brokers,
                                                        11: mk_broker(11, czxid=6000)})
    reads = cluster.zk.whole_reads

    def expire() -> None:
        cluster.zk.expired.set()
    cluster.zk.hooks["gate"] = expire  # expires while the run mirrors
    out = cluster.run(preflight)
    assert isinstance(out, OnlineOutcome)
    assert out.session_expiries == 1
    assert cluster.zk.whole_reads == reads + 1
    assert ("ZooKeeper session expired: its watches are gone; re-reading the whole tree and "
            "writing the difference") in cluster.sink.lines
    assert cluster.said("re-read the whole tree after the session expiry: 1 record(s)")
    assert _brokers_registered(cluster.types()) == 4


# -- stops before the fence, in the fence and after it -----------------------------------------


def test_voters_lost_before_the_fence_stop_the_run_with_zookeeper_untouched(cluster: Cluster
                                                                            ) -> None:
    cluster.quorum.writable = False
    with pytest.raises(VoterUnavailableError, match="stopping before the fence"):
        cluster.run()
    assert cluster.entered == ["mirror"]
    assert cluster.zk.fences_sent == 0 and cluster.zk.controller_ephemeral


def test_zookeeper_silent_in_the_mirror_says_it_is_not_fenced(cluster: Cluster) -> None:
    cluster.zk.unreachable_at = "gate"
    with pytest.raises(ZkUnreachableError, match="ZooKeeper is NOT fenced") as caught:
        cluster.run()
    assert fence_of(caught.value) is ZkFence.NOT_FENCED
    assert cluster.on_disk()["phase"] == "mirror"


def test_zookeeper_silent_before_the_fence_left_says_not_fenced(cluster: Cluster) -> None:
    cluster.zk.unreachable_at = "fence"
    with pytest.raises(ZkUnreachableError) as caught:
        cluster.run()
    assert fence_of(caught.value) is ZkFence.NOT_FENCED
    assert cluster.on_disk()["phase"] == "fencing"  # the claim was journaled first


def test_a_fence_sent_without_a_reply_may_have_applied(cluster: Cluster) -> None:
    cluster.zk.unreachable_at = "fence_sent"
    with pytest.raises(ZkUnreachableError, match="ZooKeeper MAY be fenced") as caught:
        cluster.run()
    assert fence_of(caught.value) is ZkFence.MAY_BE_FENCED


def test_migration_rewritten_since_the_judgement_fails_the_fence(cluster: Cluster) -> None:
    def rewritten() -> None:
        cluster.zk.migration, cluster.zk.migration_version = b"{}", 0
    cluster.zk.hooks["fence"] = rewritten
    with pytest.raises(MigrationMovedError, match="nothing applied"):
        cluster.run()
    assert cluster.zk.controller_ephemeral  # ZooKeeper's controller still holds it
    assert cluster.entered == ["mirror", "fencing"]


def test_another_controllers_claim_fails_the_fence(cluster: Cluster) -> None:
    def claimed() -> None:
        cluster.zk.controller = b'{"version":2,"brokerid":9,"timestamp":"5",' \
                                b'"kraftControllerEpoch":4}'
        cluster.zk.controller_ephemeral = False
    cluster.zk.hooks["fence"] = claimed
    with pytest.raises(ControllerMovedError):
        cluster.run()
    assert cluster.on_disk()["phase"] == "fencing"


def test_voters_lost_in_the_drain_say_zookeeper_is_fenced(cluster: Cluster) -> None:
    cluster.quorum.unavailable_on = "END_TRANSACTION_RECORD"
    with pytest.raises(VoterUnavailableError, match="ZooKeeper IS fenced") as caught:
        cluster.run()
    assert fence_of(caught.value) is ZkFence.FENCED
    assert cluster.on_disk()["phase"] == "fencing"


def test_zookeeper_silent_at_migration_says_the_log_is_closed(cluster: Cluster) -> None:
    cluster.zk.unreachable_at = "migration"
    with pytest.raises(ZkUnreachableError, match="ZooKeeper IS fenced") as caught:
        cluster.run()
    assert fence_of(caught.value) is ZkFence.FENCED
    assert f"the log is closed at offset {cluster.quorum.last_offset}" in str(caught.value)
    assert cluster.on_disk()["phase"] == "drained"


def test_a_topic_id_reused_in_the_window_stops_the_drain_fenced(cluster: Cluster) -> None:
    def reuse() -> None:
        topics = dict(cluster.zk.tree.topics)
        topics["beta"] = replace(topics["alpha"], name="beta")  # alpha's id, another name
        cluster.zk.tree = replace(cluster.zk.tree, topics=topics)
        cluster.zk.changed["/brokers/topics/beta"] = [EntityKey("topic", "beta")]
        cluster.zk.changes.queued.append(ChangeEvent("/brokers/topics/beta", "CREATED", 0.0))
    cluster.zk.hooks["sync"] = reuse
    with pytest.raises(BlockersFoundError, match="ZooKeeper IS fenced") as caught:
        cluster.run()
    assert fence_of(caught.value) is ZkFence.FENCED


# -- refusals --------------------------------------------------------------------------------


def _with_blocker(cluster: Cluster) -> None:
    """A log-dir failure event nobody handled: the pre-flight's LOG_DIR_EVENT_PENDING."""
    cluster.zk.tree = replace(cluster.zk.tree, log_dir_events=(
        LogDirEvent("log_dir_event_0000000001", 1, 1, st()),))


def test_a_fresh_run_judged_with_blockers_writes_nothing(cluster: Cluster) -> None:
    _with_blocker(cluster)
    out = cluster.run()
    assert isinstance(out, Stop) and out.reason == "refused"
    assert cluster.quorum.records() == []
    assert cluster.entered == []


def test_a_resumed_precopy_is_judged_again_and_refused(cluster: Cluster) -> None:
    cluster.quorum.crash_after = "BEGIN_TRANSACTION_RECORD"
    cluster.crash()
    _with_blocker(cluster)
    held = len(cluster.quorum.records())
    assert isinstance(cluster.run(), Stop)
    assert len(cluster.quorum.records()) == held
    assert cluster.on_disk()["phase"] == "precopy"


def test_a_resync_that_finds_blockers_refuses(cluster: Cluster) -> None:
    cluster.zk.crash_at = "gate"
    cluster.crash()
    cluster.zk.crash_at = None
    _with_blocker(cluster)
    assert isinstance(cluster.run(), Stop)
    assert cluster.on_disk()["phase"] == "mirror"
    assert cluster.zk.fences_sent == 0


def test_a_log_this_run_did_not_start_is_refused(cluster: Cluster) -> None:
    cluster.quorum.append_records([MetadataRecord("FEATURE_LEVEL_RECORD", 0, {
        "name": "metadata.version", "featureLevel": 21})], timestamp_ms=1)
    with pytest.raises(VoterStateError, match="this tool did not leave open"):
        cluster.run()


# -- every resume point ----------------------------------------------------------------------


def test_resume_inside_the_precopy(cluster: Cluster) -> None:
    cluster.quorum.crash_after = "BEGIN_TRANSACTION_RECORD"  # the header durable, the copy not
    cluster.crash()
    assert cluster.on_disk()["phase"] == "precopy"
    cluster.finish()
    assert cluster.said("resuming in phase precopy")
    assert cluster.entered == FRESH
    types = cluster.types()
    assert types[:2] == HEADER and types.count("BEGIN_TRANSACTION_RECORD") == 1
    assert _brokers_registered(types) == 3


def test_resume_after_the_precopy_resyncs_then_mirrors(cluster: Cluster) -> None:
    cluster.zk.crash_at = "gate"
    cluster.crash()
    assert cluster.on_disk()["phase"] == "mirror"
    cluster.zk.crash_at = None
    cluster.finish()
    assert cluster.said("resume: re-read the whole tree (watches armed again); 0 record(s) of "
                        "difference written")
    assert cluster.entered == ["fencing", "drained", "handoff", "done"]
    assert cluster.zk.fences_sent == 1


def test_resume_in_the_mirror_writes_what_changed_while_down(cluster: Cluster) -> None:
    cluster.zk.crash_at = "gate"
    cluster.crash()
    cluster.zk.crash_at = None
    topics = dict(cluster.zk.tree.topics)
    del topics["alpha"]
    states = {k: v for k, v in cluster.zk.tree.partition_states.items() if k[0] != "alpha"}
    cluster.zk.tree = replace(cluster.zk.tree, topics=topics, partition_states=states)
    out = cluster.finish()
    assert "REMOVE_TOPIC_RECORD" in cluster.types()
    assert out.mirrored_records >= 1


def test_resume_before_the_fence_reads_back_not_applied_and_fences_once(cluster: Cluster
                                                                        ) -> None:
    cluster.zk.crash_at = "fence"  # the claim journaled, the multi-op never sent
    cluster.crash()
    assert cluster.on_disk()["phase"] == "fencing"
    cluster.zk.crash_at = None
    cluster.finish()
    assert ("the previous run stopped before its fence applied (read back); mirroring again "
            "before fencing") in cluster.sink.lines
    assert cluster.entered == ["mirror", "fencing", "drained", "handoff", "done"]
    assert cluster.zk.fences_sent == 1
    assert len(cluster.on_disk()["claims"]) == 2  # both runs' claims kept


def test_resume_after_the_fence_never_fences_twice(cluster: Cluster) -> None:
    cluster.zk.crash_at = "fence_applied"  # applied, the reply never read
    cluster.crash()
    cluster.zk.crash_at = None
    out = cluster.finish()
    assert ("the previous run's fence had applied (read back); finishing the drain"
            in cluster.sink.lines)
    assert cluster.entered == ["fenced", "drained", "handoff", "done"]
    assert cluster.zk.fences_sent == 1
    assert out.window_tool_ms is None  # the window began in the run that died
    assert cluster.types().count("END_TRANSACTION_RECORD") == 1


def test_resume_at_fencing_with_zookeeper_silent_may_be_fenced(cluster: Cluster) -> None:
    cluster.zk.crash_at = "fence_applied"
    cluster.crash()
    cluster.zk.crash_at, cluster.zk.unreachable_at = None, "read_back"
    with pytest.raises(ZkUnreachableError, match="ZooKeeper MAY be fenced") as caught:
        cluster.run()
    assert fence_of(caught.value) is ZkFence.MAY_BE_FENCED


def test_an_earlier_fence_that_applied_late_is_found_at_the_read_back(cluster: Cluster) -> None:
    cluster.zk.crash_at = "fence"
    cluster.crash()  # run 1: claim C1 journaled, its fence "in flight"
    first = cluster.on_disk()["claim"]
    cluster.zk.crash_at = "gate"
    cluster.crash()  # run 2: reads back "not applied", mirrors, dies
    assert cluster.on_disk()["phase"] == "mirror" and cluster.on_disk()["claim"] is None
    cluster.zk.crash_at = None
    _apply_late(cluster, first)  # run 1's fence applies after all
    cluster.finish()
    sent = json.loads(first)["timestamp"]
    assert any(line.startswith(f"an earlier run's fence (its claim timestamped {sent}) had "
                               "applied after all (read back: /controller_epoch 6)")
               for line in cluster.sink.lines)
    assert cluster.entered == ["fenced", "drained", "handoff", "done"]
    assert cluster.zk.fences_sent == 0  # only the late one, which the fake did not count


def test_an_earlier_fence_that_applied_late_fails_this_runs_fence_and_is_ours(cluster: Cluster
                                                                               ) -> None:
    cluster.zk.crash_at = "fence"
    cluster.crash()
    first = cluster.on_disk()["claim"]
    cluster.zk.crash_at = None
    cluster.zk.hooks["fence"] = lambda: _apply_late(cluster, first)
    cluster.finish()
    assert cluster.said("an earlier run's fence (its claim timestamped")
    # mirror (read back "not applied"), fencing (this run's claim), fenced (the earlier one's)
    assert cluster.entered == ["mirror", "fencing", "fenced", "drained", "handoff", "done"]
    assert cluster.on_disk()["fence"]["claim"] == first


def test_an_earlier_fence_found_by_the_resync_is_ours(cluster: Cluster) -> None:
    cluster.zk.crash_at = "fence"
    cluster.crash()
    first = cluster.on_disk()["claim"]
    cluster.zk.crash_at = None
    # applies between this run's read-back and its resync's whole-tree read
    cluster.zk.hooks["whole_read"] = lambda: _apply_late(cluster, first)
    out = cluster.finish()
    assert cluster.entered == ["mirror", "fenced", "drained", "handoff", "done"]
    assert out.summary is not None and out.summary.report.blockers == ()


def test_a_kraft_claim_that_is_not_ours_is_refused_at_the_resync(cluster: Cluster) -> None:
    cluster.zk.crash_at = "gate"
    cluster.crash()
    cluster.zk.crash_at = None
    _apply_late(cluster, '{"version":2,"brokerid":9,"timestamp":"7","kraftControllerEpoch":3}')
    assert isinstance(cluster.run(), Stop)
    assert cluster.on_disk()["phase"] == "mirror"


def test_resume_after_the_drains_append_does_not_append_it_again(cluster: Cluster) -> None:
    cluster.quorum.crash_after = "END_TRANSACTION_RECORD"  # durable, `drained` not journaled
    cluster.crash()
    assert cluster.on_disk()["phase"] == "fencing"
    held = len(cluster.quorum.records())
    cluster.finish()
    assert len(cluster.quorum.records()) == held
    assert cluster.entered == ["fenced", "drained", "handoff", "done"]


def test_resume_after_the_drain_writes_migration_only(cluster: Cluster) -> None:
    cluster.zk.crash_at = "migration"
    cluster.crash()
    assert cluster.on_disk()["phase"] == "drained"
    held = len(cluster.quorum.records())
    cluster.zk.crash_at = None
    cluster.finish()
    assert cluster.said("/migration written")
    assert cluster.entered == ["handoff", "done"]
    assert len(cluster.quorum.records()) == held and cluster.zk.fences_sent == 1


def test_resume_after_migration_reads_its_write_back_as_applied(cluster: Cluster) -> None:
    cluster.zk.crash_at = "migration_applied"
    cluster.crash()
    version = cluster.zk.migration_version
    cluster.zk.crash_at = None
    out = cluster.finish()
    assert cluster.zk.migration_writes == 1 and cluster.zk.migration_version == version
    assert out.migration_zk_version == version
    assert cluster.entered == ["handoff", "done"]


def test_resume_inside_the_handoff_begins_it_again(cluster: Cluster) -> None:
    cluster.quorum.crash_on_resign = True
    cluster.crash()
    assert cluster.on_disk()["phase"] == "handoff"
    out = cluster.finish()
    assert cluster.entered == ["handoff", "done"]
    assert out.migration_zk_version == cluster.zk.migration_version
    assert cluster.released == 1


def test_a_finished_migration_reruns_as_a_no_op(cluster: Cluster) -> None:
    cluster.finish()
    before = cluster.on_disk()
    held = len(cluster.quorum.records())
    out = cluster.finish()
    assert out.already_done
    assert cluster.said("this migration already finished (journal")
    assert cluster.entered == []
    assert cluster.on_disk() == before and len(cluster.quorum.records()) == held
    assert out.fence == before["facts"]["fence"]


def _apply_late(cluster: Cluster, claim: str) -> None:
    """A fence sent earlier applies now: `/controller` holds `claim`, both versions bumped."""
    zk = cluster.zk
    zk.controller, zk.controller_ephemeral = claim.encode(), False
    zk.controller_epoch += 1
    zk.epoch_version += 1
    zk.migration = b"{}" if zk.migration is None else zk.migration
    zk.migration_version += 1
    parsed = json.loads(claim)
    zk.tree = replace(zk.tree, controller=ControllerZnode(
        parsed["brokerid"], 2, int(parsed["timestamp"]), parsed["kraftControllerEpoch"],
        ZnodeStat(czxid=9, mzxid=9, version=0, ctime_ms=1, mtime_ms=2, ephemeral_owner=0)))


# -- the read-back's judgement, alone --------------------------------------------------------

OURS = '{"version":2,"brokerid":3000,"timestamp":"1700000000001","kraftControllerEpoch":1}'


def _state(controller: bytes | None, *, ephemeral: bool = False,
           migration_version: int | None = 1) -> FenceState:
    return FenceState(6, 5, controller, 0, ephemeral, b"{}", migration_version)


def test_our_claim_in_a_persistent_controller_is_our_fence() -> None:
    token = our_applied_fence([OURS], _state(OURS.encode()))
    assert token is not None and token.already_applied
    assert (token.controller_epoch, token.epoch_zk_version, token.migration_zk_version) == \
        (6, 5, 1)


@pytest.mark.parametrize("state", [
    _state(None),  # nobody holds /controller
    _state(OURS.encode(), ephemeral=True),  # an ephemeral node is a ZooKeeper controller's
    _state(OURS.replace("0001", "0002").encode()),  # same id and epoch, another timestamp
    _state(OURS.encode(), migration_version=None),  # the fence writes /migration too
])
def test_anything_else_is_not_our_fence(state: FenceState) -> None:
    assert our_applied_fence([OURS], state) is None


# -- the driver's shape ----------------------------------------------------------------------


def test_the_journals_phase_changes_in_one_place() -> None:
    """`Journal.enter` is called from one site in migrate/ (the driver's `_enter`)."""
    sites = []
    for path in sorted((ROOT / "migrate").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "enter"):
                sites.append(path.relative_to(ROOT).as_posix())
    assert sites == ["migrate/online/run.py"]
