"""The handoff phase: the quorum goes to a real controller (the stand-in resigns, or local voters
close for the controllers to start on), `--on-cutover` runs, and the run waits for a KRaft
controller's claim of `/controller` (t2) and, with the stand-in, for the brokers to follow it."""

from __future__ import annotations

import os
import subprocess

from migrate.online.outcome import round_ms
from migrate.online.phases import Advance, Phase
from migrate.online.phases.context import RunContext
from writers import VoterUnavailableError
from writers import crash_point as _crash  # test-only hooks (writers/_faults.py)
from zkreader import ZkUnreachableError

__all__ = ["Handoff", "resign"]


class Handoff:
    """The handoff: `/migration` and the handoff journaled in one save, then the stand-in resigns
    (or the local voters close), `--on-cutover` runs, and a KRaft controller's claim of
    `/controller` ends the window (t2)."""

    def __init__(self, c: RunContext) -> None:
        self.c = c
        self._on_cutover_start = 0.0  # when --on-cutover started (the run's clock)

    def begin(self) -> Advance:
        """`handoff` for a run whose `/migration` an earlier run wrote (the journal holds its
        version), or that was stopped inside the handoff: it begins again."""
        self.c.out.migration_zk_version = self.c.journal.migration_zk_version
        return Advance(Phase.HANDOFF, {"migration_zk_version": self.c.out.migration_zk_version})

    def hand_off(self) -> float | None:
        """With the handoff journaled: give the quorum up and wait for the claim: t2, or None."""
        handoff = self.c.timings.mark("handoff")
        if self.c.after_drain is not None:
            self.c.out.migration_znode_ms = self.c.after_drain.finish(handoff)
        if not resign(self.c):
            # Local voters: writing is over, every voter's queued writes are finished (a voter
            # that failed on the last batch is recorded now, not lost); free the locks for the
            # controllers.
            self.c.release_locks()
            if not self.c.o.on_cutover:
                self.c.sink.say("no --on-cutover: start the KRaft controllers now (they find "
                                "ZkMigrationState MIGRATION and /migration, and take over)")
                return None
        # One deadline for the start command and the claim: a command that runs a controller
        # in the foreground never exits, and one that hangs must not hold the run either.
        deadline = self.c.clock() + self.c.o.handoff_timeout_s
        command = self._start_on_cutover() if self.c.o.on_cutover else None
        self.c.out.claim_awaited = True
        while True:
            if command is not None and self.c.out.on_cutover_exit is None:
                self._on_cutover_exited(command)
            left = deadline - self.c.clock()
            if left <= 0:
                break
            try:
                # each read bounded by what is left: a dead ZooKeeper cannot stretch the wait
                if self.c.zk.read_fence_state(timeout_s=left
                                              ).kraft_controller_epoch > self.c.epoch:
                    t2 = self.c.timings.mark("claimed", stamp=False)
                    self.c.sink.say("a KRaft controller claimed /controller: handoff complete")
                    if command is not None and self.c.out.on_cutover_exit is None:
                        self.c.sink.say(f"--on-cutover (pid {command.pid}) has not exited yet: "
                                        "left running (it may be a controller)")
                    self._brokers_following()
                    return t2
            except ZkUnreachableError:
                pass
            self.c.sleep(0.01)
        self.c.sink.say(f"no KRaft controller claimed /controller within "
                        f"{self.c.o.handoff_timeout_s:g}s: window_ms.total is null")
        if command is not None and self.c.out.on_cutover_exit is None:
            self.c.out.on_cutover_still_running = True
            self.c.sink.say(f"WARNING: --on-cutover (pid {command.pid}) is still running after "
                            f"--handoff-timeout {self.c.o.handoff_timeout_s:g}s: left running "
                            "(it may be a controller)")
        return None

    def _brokers_following(self) -> None:
        """With the stand-in, after the claim: does every broker ZooKeeper listed at the fence
        (and registered with the stand-in then) fetch from the new leader? Asked the way
        `kafka-metadata-quorum describe --replication` asks (DescribeQuorum): a broker counts
        once its LastFetchTimestamp moved between two answers of the same leader, so a broker
        that died after its last fetch does not. The leader may change after the handover (a
        real run saw 3002 lead epoch 2, then 3001 epoch 3): a voter that does not lead answers
        with an error naming no leader, so the next voter is asked, and a new leader's answers
        start the count again (its clock, its fetches). Waits at most 30 s (or
        --handoff-timeout)."""
        if self.c.out.handover is None:  # no handover: local voters, or the stand-in's timed out
            return
        leader = int(self.c.out.handover["new_leader"])
        expected = set(self.c.out.zk_brokers) - set(self.c.out.brokers_unregistered or [])
        if leader < 0 or not expected:
            return
        others = [v.node_id for v in self.c.quorum.voter_status()
                  if v.node_id not in (leader, self.c.controller_id)]
        asking = [leader, *others]  # the handover's leader first, then the other controllers
        turn = 0
        deadline = self.c.clock() + min(30.0, self.c.o.handoff_timeout_s)
        counted: tuple[int, dict[int, int]] | None = None  # (leader, its first answer)
        moved: set[int] = set()
        while not expected <= moved and self.c.clock() < deadline:
            asked = asking[turn % len(asking)]
            try:
                answered, seen = self.c.quorum.describe_quorum(asked)
            except VoterUnavailableError:
                turn += 1  # not the leader (or not answering): the next controller
                self.c.sleep(0.1)  # an election in progress: no voter leads for a moment
                continue
            leader = answered
            if counted is None or counted[0] != answered:
                counted, moved = (answered, seen), set()  # a new leader: count afresh
            else:
                moved |= {b for b in expected if seen.get(b, -1) > counted[1].get(b, -1)}
            if not expected <= moved:
                self.c.sleep(1.0)  # DescribeQuorum again once the brokers fetched more
        self.c.out.brokers_not_following = sorted(expected - moved)
        if self.c.out.brokers_not_following:
            self.c.sink.say(f"WARNING: broker(s) {self.c.out.brokers_not_following} do not fetch "
                            f"from the new leader {leader} (DescribeQuorum)")
        else:
            self.c.sink.say(f"every broker fetches from the new leader {leader} (DescribeQuorum)")

    def _start_on_cutover(self) -> subprocess.Popen[bytes]:
        """Start the operator's command; `hand_off` watches it under its deadline."""
        assert self.c.o.on_cutover is not None  # the caller runs this only when it was given
        self._on_cutover_start = self.c.clock()
        env = {**os.environ, "ZK2KRAFT_LAST_OFFSET": str(self.c.quorum.last_offset),
               "ZK2KRAFT_LEADER_EPOCH": str(self.c.epoch),
               "ZK2KRAFT_VOTERS": ",".join(f"{t.node_id}={t.path}" for t in self.c.o.voters)}
        self.c.sink.say(f"running --on-cutover: {self.c.o.on_cutover} (it and the claim of "
                        f"/controller get --handoff-timeout {self.c.o.handoff_timeout_s:g}s)")
        proc = subprocess.Popen(self.c.o.on_cutover, shell=True, env=env)  # noqa: S602 - operator's command
        _crash("during_on_cutover")
        return proc

    def _on_cutover_exited(self, proc: subprocess.Popen[bytes]) -> None:
        """Note the command's exit once it has one (never waiting for it)."""
        code = proc.poll()
        if code is None:
            return
        self.c.out.on_cutover_exit = code
        self.c.timings.took("on_cutover", self._on_cutover_start)
        if code != 0:
            self.c.sink.say(f"WARNING: --on-cutover exited {code}; waiting for a KRaft "
                            "controller's claim of /controller until --handoff-timeout all the "
                            "same")


def resign(c: RunContext) -> bool:
    """The stand-in hands the quorum to a real controller (EndQuorumEpoch); local voters
    close (`QuorumLog.resign`). True when there was a handover (the stand-in's)."""
    start = c.clock()
    result = c.quorum.resign(timeout_s=c.o.handoff_timeout_s)
    if result is None:
        return False
    c.timings.took("resign", start)
    c.out.handover = {"new_leader": result.new_leader, "new_epoch": result.new_epoch,
                      "elapsed_ms": round_ms(result.elapsed_ms),
                      "fetches_answered": result.fetches_answered,
                      "events": [e.to_json() for e in result.events]}
    if result.new_leader >= 0:
        c.timings.mark("new_leader")
    if result.new_leader < 0:
        c.sink.say("WARNING: the stand-in resigned but no controller announced itself "
                   f"within {c.o.handoff_timeout_s:g}s")
    else:
        c.sink.say(f"stand-in resigned: controller {result.new_leader} leads epoch "
                   f"{result.new_epoch} ({result.elapsed_ms:.0f} ms after "
                   "EndQuorumEpoch)")
    return True
