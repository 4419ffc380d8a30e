"""The stand-in transport of `migrate --cutover now|manual`: open, bootstrap, resign.

`migrate.online.run` runs the same phases over either `QuorumLog`; what differs for the stand-in
(`writers.StandInLeader`) lives here, so the orchestration stays one piece:

* **Open.** The stand-in listens on its voter address, reads its own log dir, and wins the
  election (Vote, then a LeaderChange control record opens its epoch). Nothing is appended
  before a majority granted, so a refused election leaves no trace in anyone's log.
* **Bootstrap first.** On a fresh log the first committed records are what Kafka's own
  controller writes when it activates on an empty log in migration mode (3.9
  `ActivationRecordsGenerator`): `BeginTransactionRecord("Bootstrap records")`,
  `FeatureLevelRecord(metadata.version)`, `ZkMigrationStateRecord(PRE_MIGRATION)`,
  `EndTransactionRecord`. Why (docs/design/standin-recovery.md, "Stand-in killed", checked against
  real 3.9.1): if zk2kraft dies before EndTransaction of the migration, a real controller is elected
  and activates on the committed prefix; with a FeatureLevelRecord but no committed PRE_MIGRATION
  its migration-mode activation is a fatal fault, while a PRE_MIGRATION log makes it abort the
  open transaction and run Kafka's own migration (graceful).
* **Brokers** register with the stand-in (BrokerRegistration, BrokerHeartbeat, as Kafka's
  active controller takes them in pre-migration) once the pre-copy is committed (`run`
  calls `serve_brokers`; a resumed run's log already holds it, so from the election on), so
  they are registered and unfenced in the log before the handover and keep their epochs.
* **Resign** after `/migration` is written: EndQuorumEpoch with the followers as preferred
  successors; t2 is still the new leader's claim of `/controller`.
"""

from __future__ import annotations

from collections.abc import Callable

from migrate.flags.standin import StandInSpec
from writers import MetadataRecord, MetadataVersion, StandInLeader, VoterStateError

__all__ = ["ZK_MIGRATION_STATE_PRE_MIGRATION", "bootstrap_records", "open_standin"]

ZK_MIGRATION_STATE_PRE_MIGRATION = 2
"""Kafka 3.5+'s `ZkMigrationState.PRE_MIGRATION` (3.4 used 1; 3.5 swapped it with MIGRATION)."""

BOOTSTRAP_TRANSACTION = "Bootstrap records"


def bootstrap_records(mv: MetadataVersion) -> list[MetadataRecord]:
    """What a 3.9 controller in migration mode commits first on an empty log (module docstring)."""
    return [
        MetadataRecord("BEGIN_TRANSACTION_RECORD", 0, {"name": BOOTSTRAP_TRANSACTION}),
        MetadataRecord("FEATURE_LEVEL_RECORD", 0,
                       {"name": "metadata.version", "featureLevel": mv.feature_level}),
        MetadataRecord("ZK_MIGRATION_STATE_RECORD", 0,
                       {"zkMigrationState": ZK_MIGRATION_STATE_PRE_MIGRATION}),
        MetadataRecord("END_TRANSACTION_RECORD", 0, {}),
    ]


def open_standin(
    spec: StandInSpec, *, cluster_id: str, mv: MetadataVersion, resuming: bool,
    say: Callable[[str], None], elect_timeout_s: float = 120.0,
) -> tuple[StandInLeader, int]:
    """Listen, win the election and (on a fresh log) commit the bootstrap.

    Returns:
        The leading stand-in, and the last offset of what opening wrote on a fresh log (the
        LeaderChange and the bootstrap; the run's own records start after it), or -1 when the
        log already held this run's records (a resume).

    Raises:
        VoterStateError: the log dir holds a log but there is no journal (not this run's), or a
            real controller already leads (the stand-in must win the first election).
        VoterUnavailableError: no majority granted the vote or committed the bootstrap.
    """
    standin = StandInLeader(
        spec.node_id, listen=spec.listen, voters=spec.voters, log_dir=spec.log_dir,
        cluster_id=cluster_id, fetch_timeout_ms=spec.fetch_timeout_ms,
        broker_session_timeout_ms=spec.broker_session_timeout_ms,
        tls_server=spec.tls_server, tls_client=spec.tls_client,
        sasl_users=spec.sasl_users, sasl_client=spec.sasl_client)
    try:
        fresh = standin.last_offset < 0
        if not fresh and not resuming:
            raise VoterStateError(
                f"--standin {spec.node_id}@...={spec.log_dir}: the directory already holds a "
                f"metadata log (offsets 0..{standin.last_offset}) and there is no journal for "
                "it: refusing to lead the controllers with a log this run did not start")
        others = ", ".join(f"{n}@{h}:{p}" for n, (h, p) in sorted(spec.voters.items())
                           if n != spec.node_id)
        say(f"stand-in {spec.node_id} listening on {spec.listen[0]}:{spec.listen[1]}; asking "
            f"{others} for their votes")
        epoch = standin.elect(elect_timeout_s, rejoin=not fresh)
        say(f"stand-in {spec.node_id} leads the quorum at epoch {epoch}")
        if not fresh:
            # A re-run leads a new epoch: its LeaderChange committed means a majority fetches
            # from it again, so the resumed run's gate sees live followers, not stale ones.
            standin.wait_committed(standin.last_offset)
            standin.serve_brokers(mv)
            return standin, -1
        standin.append_records(bootstrap_records(mv), timestamp_ms=0)
        say(f"bootstrap (metadata.version {mv.name}, ZkMigrationState PRE_MIGRATION) committed "
            f"at offsets 1..{standin.last_offset}")
        return standin, standin.last_offset
    except BaseException:
        standin.close()
        raise
