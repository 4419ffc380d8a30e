"""What a re-run of `migrate --standin` says when a real controller took the quorum over.

When zk2kraft dies mid-migration, the controllers stop hearing from the stand-in (after their
`controller.quorum.fetch.timeout.ms`), elect one of themselves and it activates on the committed
prefix of the log. A re-run that finds a voter following that controller cannot lead again (its
log moved on without the stand-in), so it stops and tells the operator where things stand, from
the journal's phase and ZooKeeper's `/controller`, `/controller_epoch` and `/migration`. Facts
behind each sentence, checked against real Kafka 3.9.1 (`tests/oracle/test_standin_killed.py`):

* Kafka aborts a migration transaction left open ("Aborting in-progress metadata transaction"),
  so before the drain committed the log is back at the PRE_MIGRATION bootstrap the stand-in
  committed first, and Kafka's own migration (ZooKeeper copied again by Kafka) is what follows;
* after `ZkMigrationStateRecord(MIGRATION)` and `EndTransactionRecord` committed, the controller
  loads the migrated log ("Loaded ZK migration state of MIGRATION");
* before the drain committed, the migration driver waits until every voter registered: "No
  registration found for controller 3000", the stand-in's slot, which a real controller started
  there (same id and address, formatted with the cluster id) fills. The controllers that had
  registered with the stand-in (it answers REQUEST_TIMED_OUT) did not always register with the
  next leader after the stand-in died ("No registration found for controller 3002" for minutes,
  seen in the oracle test); a restart makes a controller register at start.
* the brokers in migration mode registered with the stand-in inside that transaction; once it
  is aborted the new leader answers their heartbeats with STALE_BROKER_EPOCH ("Receive a
  heartbeat from broker N before registration") and a 3.9.1 ZooKeeper-mode broker does not
  register again until restarted, while Kafka's migration still reaches DUAL_WRITE; its
  AllocateProducerIds then fails ("No broker registration found for broker id N"), so new
  idempotent producers asking it stall (seen in a killed-with-brokers rehearsal,
  docs/design/standin-recovery.md).
* Kafka 3.9.1's metadata loader folds an aborted transaction back into the image of a controller
  that reads it together with the records after it (one that starts empty, or restarts on the
  log): its `MetadataBatchLoader` keeps the aborted records in the delta it is building when a
  BeginTransactionRecord or a plain record follows in the same read. Kafka's own migration on
  such a log needs exactly those controllers (one in the stand-in's slot, the others restarted
  to register), and the one that leads it writes its image into ZooKeeper (SYNC_KRAFT_TO_ZK):
  a topic deleted after the stand-in stopped came back in ZooKeeper and on the brokers, with its
  old id (real 3.9.1, 2026-11-27, docs/design/standin-recovery.md "Stand-in killed"). So
  before the drain committed the way on is starting over (not fenced) or handing ZooKeeper back
  (fenced), both of which discard the controllers' logs; a controller in the stand-in's slot is
  not offered.
"""

from __future__ import annotations

import json

from migrate.flags.standin import StandInSpec
from migrate.online.journal import Journal
from migrate.online.operator_sequence import (
    REVERT_BROKERS_FETCHED,
    start_over,
)
from migrate.online.phases import Phase
from writers import QuorumLedElsewhereError
from zkreader import FenceState, MigrationZnode

__all__ = ["explain_led_first", "explain_takeover", "refused_fence_advice"]


def _claim(state: FenceState) -> dict[str, object]:
    try:
        got = json.loads(state.controller or b"null")
    except ValueError:
        return {}
    return got if isinstance(got, dict) else {}


def _int(value: object, default: int = -1) -> int:
    return int(value) if isinstance(value, int | str) and str(value).lstrip("-").isdigit() \
        else default


def explain_takeover(exc: QuorumLedElsewhereError, journal: Journal, state: FenceState,
                     spec: StandInSpec, *, connect: str, stopped_in: Phase,
                     migration_written: int | None) -> str:
    """The re-run's message: what happened, what ZooKeeper and the quorum hold, what to do.

    `stopped_in` is the journal's phase as the stopped run left it; `migration_written` the
    offset this re-run wrote into `/migration` (the stopped run's
    last step before the handoff), or None."""
    leader, epoch = exc.leader_id, exc.leader_epoch
    claim = _claim(state)
    claimed_by = _int(claim.get("brokerid"))
    claimed_epoch = _int(claim.get("kraftControllerEpoch"))
    ours = journal.leader_epoch
    head = (f"zk2kraft's stand-in {spec.node_id} stopped in phase {stopped_in} (journal "
            f"{journal.path}) and cannot lead again: controller {leader} leads the KRaft quorum "
            f"at epoch {epoch}.")
    start_slot = _start_slot(spec)
    rollback = (f"stop the KRaft controllers, run `zk2kraft rollback --zookeeper {connect} "
                f"--voter {spec.node_id}={spec.log_dir} --journal {journal.directory}`, then "
                f"{REVERT_BROKERS_FETCHED}")
    if claimed_epoch > ours and claimed_by != spec.node_id:
        mig = _migration(state)
        return (f"{head} Kafka has taken the migration over: controller {claimed_by} claimed "
                f"/controller with kraftControllerEpoch {claimed_epoch}"
                + (f" and /migration names its log up to offset {mig}" if mig >= 0 else "")
                + ". Nothing is left for zk2kraft to do: follow Kafka's guide from there "
                "(brokers to KRaft, then finalise), or roll back as Kafka's guide says, the "
                f"brokers leaving migration mode this way: {REVERT_BROKERS_FETCHED}.")
    fenced = claimed_by == spec.node_id and claimed_epoch == ours
    if not stopped_in.reached(Phase.DRAINED):
        # Why the log Kafka aborted is not migrated on: the module docstring's last point.
        log_state = ("On activation Kafka aborted the migration transaction the stand-in had "
                     "left open: the quorum's log is back at the PRE_MIGRATION bootstrap, with "
                     "the aborted records still in it. Kafka's own migration must not go on from "
                     "this log: Kafka 3.9.1 folds an aborted transaction's records back into the "
                     "metadata image of a controller that reads them together with later "
                     "records, as a controller started in the stand-in's slot or restarted on "
                     "this log does, and the one that leads Kafka's migration writes that image "
                     "into ZooKeeper, so a topic, ACL, config, quota or credential removed since "
                     "the stand-in stopped would come back.")
        if not fenced:
            zk_controller = (f"its controller (broker {claimed_by}) still runs the cluster"
                             if claimed_by >= 0 else "its brokers elect their controller as "
                             "before")
            return (f"{head} ZooKeeper was not fenced: {zk_controller} and ZooKeeper holds "
                    f"all metadata, so nothing is lost. {log_state} So "
                    "start over with zk2kraft, "
                    + _start_over(spec, journal.path, f"{leader} at epoch {epoch}", connect))
        return (f"{head} ZooKeeper IS fenced (/controller claimed by {spec.node_id} with "
                f"kraftControllerEpoch {ours}, /controller_epoch {state.controller_epoch}): its "
                "controller can no longer write, so ZooKeeper holds every change up to the "
                "fence and nothing is lost, but no controller serves the cluster until one "
                f"takes over. {log_state} So hand ZooKeeper back: {rollback} (each broker's "
                f"quorum-state names controller {leader} at epoch {epoch}, which a later "
                "migration's re-formatted quorum would contradict). ZooKeeper's controller "
                "then runs the cluster again; to migrate later, re-format the controllers, empty "
                f"{spec.log_dir} and follow the printed sequence from its first step.")
    done = (f"{head} The migration had committed before it stopped (ZkMigrationStateRecord"
            f"(MIGRATION) and EndTransactionRecord, offsets up to {journal.last_durable_offset}):"
            f" controller {leader} took over the migrated log and nothing is lost.")
    if migration_written is not None:
        return (f"{done} This re-run wrote /migration (kraft_metadata_offset "
                f"{migration_written}), the step the stopped run had left; Kafka's controller "
                "reads it only when it becomes active, and until then its migration driver "
                "stays inactive (\"KRaft controller indicates an active migration, but the ZK "
                f"state does not\"). Restart controller {leader}: the controller that becomes "
                "active next claims /controller and enters dual-write, and the brokers follow "
                f"it. To go back instead: {rollback}.")
    return (f"{done} /migration names the log's end, so Kafka's controller claims /controller "
            "and enters dual-write on its own: nothing is left for zk2kraft to do. Afterwards "
            f"{start_slot} to fill the stand-in's slot.")


def _start_slot(spec: StandInSpec) -> str:
    slot = f"{spec.node_id}@{spec.listen[0]}:{spec.listen[1]}"
    return (f"start a real KRaft controller in the stand-in's slot: node.id="
            f"{spec.node_id}, its controller listener at {spec.listen[0]}:"
            f"{spec.listen[1]} (the entry {slot} of controller.quorum.voters), formatted "
            "with this cluster's id and configured for the migration like the others")


def explain_led_first(exc: QuorumLedElsewhereError, state: FenceState, spec: StandInSpec, *,
                      connect: str, journal_path: object) -> str:
    """A fresh run's refusal when a controller stood for election before the stand-in asked.

    Why it happens (issue 30): the printed order starts zk2kraft first and the controllers
    within its 120 s; a controller started earlier, or long before, stands for election once
    its `controller.quorum.election.timeout.ms` runs out, and two of three voters are a
    majority. Brokers in migration mode then fetch that controller's log as observers, so the
    way out discards it on the brokers too (`start_over`). Where that controller also claimed
    `/controller` (a KRaft epoch in the claim, or `/migration` naming a log offset), Kafka's own
    migration is under way: the brokers registered with it and it copied ZooKeeper itself.

    Args:
        exc: the voter's refusal (the leader it named, -1 when none yet, and its epoch).
        state: `/controller_epoch`, `/controller` and `/migration` as read after the refusal.
        spec: the stand-in's flags.
        connect: the `--zookeeper` connect string.
        journal_path: the journal file this run would have written.
    """
    leader, epoch = exc.leader_id, exc.leader_epoch
    if leader == spec.node_id:  # not a controller: an earlier run whose journal is gone
        return (f"zk2kraft's stand-in {spec.node_id} cannot lead: voter {exc.voter_id} follows "
                f"stand-in {spec.node_id} itself at epoch {epoch}, an earlier zk2kraft run that "
                f"led this quorum, and there is no journal at {journal_path} to resume it. The "
                "brokers in migration mode follow that run's log in their own "
                "__cluster_metadata-0. Start over, "
                + _start_over(spec, journal_path, f"{leader} at epoch {epoch}", connect))
    who = (f"controller {leader} leads the KRaft quorum at epoch {epoch}" if leader >= 0 else
           f"a controller stood for election at epoch {epoch} (no leader known yet)")
    head = (f"zk2kraft's stand-in {spec.node_id} cannot lead: {who} (voter {exc.voter_id} "
            "answered the stand-in's vote request so). A controller was started before "
            "zk2kraft asked for votes, or too long before: its "
            "controller.quorum.election.timeout.ms ran out and it stood for election without "
            "the stand-in (the other controllers are a majority). The brokers in migration mode "
            "fetch from the leader as Raft observers: they follow "
            + (f"controller {leader} at epoch {epoch}" if leader >= 0 else "whoever wins")
            + " in their own __cluster_metadata-0.")
    claim = _claim(state)
    claimed_by = _int(claim.get("brokerid"))
    kraft_epoch = state.kraft_controller_epoch
    mig = _migration(state)
    followed = f"{leader} at epoch {epoch}" if leader >= 0 else None
    if kraft_epoch >= 0 or mig >= 0:
        return (f"{head} Kafka's own migration is under way: controller {claimed_by} claimed "
                f"/controller with kraftControllerEpoch {kraft_epoch}"
                + (f" and /migration names its log up to offset {mig}" if mig >= 0 else "")
                + " (the brokers registered with it and it copied ZooKeeper itself); zk2kraft "
                "has nothing to do. To let it finish: " + _start_slot(spec) + ", so that "
                "every voter is registered, then follow Kafka's guide (brokers to KRaft, then "
                "finalise). To go back instead: stop every KRaft controller, then, as Kafka's "
                f"guide reverts it, delete /controller (`zookeeper-shell {connect} delete "
                "/controller`), then get and delete /migration, quickly; then "
                f"{REVERT_BROKERS_FETCHED}. ZooKeeper's controller then runs the cluster again; "
                "to migrate with zk2kraft later, follow the printed sequence from its first "
                "step on re-formatted controllers.")
    return (f"{head} ZooKeeper was not fenced and nothing was migrated: ZooKeeper's controller "
            "still runs the cluster and holds all metadata. Start over, "
            + _start_over(spec, journal_path, followed, connect))


def _start_over(spec: StandInSpec, journal_path: object, followed: str | None,
                connect: str) -> str:
    """`in this order: ` and the start-over, brokers included (`operator_sequence.start_over`,
    which says why each step), its last step this same command run again.

    Args:
        journal_path: the journal file (the run's, or the one a fresh run would write).
        followed: who the brokers followed ("3002 at epoch 3"), when known.
    """
    return "in this order: " + start_over(
        connect=connect, standin_dir=str(spec.log_dir), journal=str(journal_path),
        followed=followed, rerun="run this command again") + "."


def _migration(state: FenceState) -> int:
    """`/migration`'s kraft_metadata_offset (-1 when absent or unreadable)."""
    try:
        doc = json.loads(state.migration or b"{}")
    except ValueError:
        return -1
    return _int(doc.get("kraft_metadata_offset")) if isinstance(doc, dict) else -1


def refused_fence_advice(refusal: str, new_leader: int, new_epoch: int, *, connect: str,
                         journal_path: object, handoff_timeout_s: float) -> str:
    """What a stand-in run whose fence refused (`/migration` changed, nothing applied) says.

    The stand-in has resigned by then (docs/design/standin-recovery.md, "A refused fence hands the
    quorum over"): `new_leader` leads at `new_epoch`, or -1 when none announced itself in time.
    Either way the re-run cannot lead again, and it is the re-run that reads the journal and
    ZooKeeper and says how to go on (`explain_takeover`)."""
    go_on = "says how to start over with zk2kraft"
    if new_leader >= 0:
        quorum = (f"The stand-in handed the KRaft quorum to controller {new_leader} (epoch "
                  f"{new_epoch}) at once with EndQuorumEpoch, rather than leave it leaderless "
                  "until the controllers' controller.quorum.fetch.timeout.ms; its migration "
                  "transaction is aborted and the stand-in cannot lead again.")
        rerun = f"it finds the quorum led by a real controller and {go_on}"
    else:
        quorum = ("The stand-in resigned (EndQuorumEpoch) but no controller announced itself "
                  f"within {handoff_timeout_s:g}s; they elect one of themselves at the latest "
                  "once their controller.quorum.fetch.timeout.ms runs out.")
        rerun = ("it resumes if no controller leads the quorum by then, and otherwise "
                 f"{go_on}")
    return (f"{refusal}. Nothing was applied in ZooKeeper: its controller keeps running the "
            f"cluster. {quorum} Once it is known who wrote /migration, and only if nothing is "
            "migrating this cluster, delete /migration deliberately (e.g. `zookeeper-shell "
            f"{connect} delete /migration`; the controllers in migration mode create their "
            "empty one again when they start) and run this same command again (journal "
            f"{journal_path}): {rerun}")


def explain_recorded_leader(m: MigrationZnode, spec: StandInSpec, *, connect: str,
                            journal_path: object) -> str | None:
    """A fresh stand-in run's `MIGRATION_ZNODE_EXISTS`, when a controller that led recorded itself.

    A KRaft controller in migration mode that becomes active records its epoch in `/migration`
    before it migrates anything (real 3.9.1: `kraft_controller_epoch` set, metadata offset -1).
    Which a fresh run meets first depends on timing: the controller's vote refusal
    (`explain_led_first`) or this record, read before any vote is asked. Either way the cause
    and the way out are the same (issue 30): controllers started before zk2kraft led without
    it, the brokers in migration mode follow that leader, and the start-over discards its log on
    the brokers too. None when `/migration` says something else (it keeps the plain blocker).
    """
    if m.kraft_metadata_offset != -1 or m.kraft_controller_epoch < 0:
        return None
    return (f"/migration records a KRaft controller that became active at epoch "
            f"{m.kraft_controller_epoch} with nothing migrated (metadata offset -1): a "
            "controller was started before zk2kraft asked for votes, or too long before, and "
            "led the quorum without the stand-in (its controller.quorum.election.timeout.ms ran "
            "out). The brokers in migration mode follow that controller in their own "
            "__cluster_metadata-0. ZooKeeper was not fenced and nothing was migrated. Start "
            "over, " + _start_over(spec, journal_path, None, connect))
