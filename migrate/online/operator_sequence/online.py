"""The online paths' sequences: through the stand-in, and into local voter directories."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from migrate.flags.standin import StandInSpec
from migrate.online.journal import JOURNAL_FILE, default_journal_dir
from migrate.online.operator_sequence.common import (
    ONLINE_STANDIN,
    ONLINE_VOTER,
    REVERT_BROKERS,
    REVERT_BROKERS_FETCHED,
    OperatorSequence,
    Step,
    address_notes,
    bracketed_host,
    canary_bootstrap,
    controller_dir_placeholder,
    finalise_step,
    migrating_brokers,
    migration_controllers,
    migration_mode_step,
    prepare_step,
    revert_zk_action,
    start_over,
    to_kraft_step,
    upgrade_step,
    voters_string,
)
from writers import MetadataVersion
from zkreader import ClusterSnapshot

__all__ = [
    "online_voter_sequence",
    "operator_sequence",
]


def operator_sequence(
    snapshot: ClusterSnapshot,
    spec: StandInSpec,
    *,
    metadata_version: MetadataVersion,
    zookeeper: str,
    controller_listener: str = "CONTROLLER",
    target_kafka: str = "3.9",
) -> OperatorSequence:
    """Build the stand-in path's sequence for this cluster and these controllers.

    Args:
        snapshot: the tree `plan` read (brokers from /brokers/ids, /cluster/id, tokens).
        spec: the checked stand-in flags: who zk2kraft is and which controllers follow it.
        metadata_version: the KRaft metadata.version the migration writes.
        zookeeper: the `--zookeeper` connect string, as the controllers must use it.
        controller_listener: the controllers' listener name (`controller.listener.names`).
        target_kafka: `3.9`, or a 4.N line: the migration ends on 3.9 and Kafka's rolling
            upgrade follows Finalise (`upgrade_step`).
    """
    voters = voters_string(spec.voters)
    mv = metadata_version.name
    others = {n: a for n, a in spec.voters.items() if n != spec.node_id}
    controllers, notes = migration_controllers(
        snapshot, others, {n: controller_dir_placeholder(n) for n in others}, voters=voters,
        zookeeper=zookeeper, listener=controller_listener, protocol=spec.protocol,
        election_timeout=True)
    brokers = migrating_brokers(snapshot, voters=voters, listener=controller_listener,
                                protocol=spec.protocol, mv=mv)
    cluster_id = snapshot.cluster_id.cluster_id if snapshot.cluster_id is not None else None
    bootstrap, bootstrap_note = canary_bootstrap(snapshot)
    notes = [
        "Kafka's own sample configurations use controller.quorum.bootstrap.servers (dynamic "
        "voters); the stand-in leads a static quorum, so every node here names the voters "
        "with controller.quorum.voters, zk2kraft's slot included.",
        *notes,
        bootstrap_note,
    ]
    steps = _standin_steps(spec, voters=voters, mv=mv, zookeeper=zookeeper,
                           cluster_id=cluster_id, controller_ids=list(controllers),
                           listener=controller_listener, bootstrap=bootstrap)
    return OperatorSequence(ONLINE_STANDIN, cluster_id, mv, target_kafka, spec, controllers,
                            brokers, (), steps + _upgrade(target_kafka, voters), tuple(notes))


def online_voter_sequence(
    snapshot: ClusterSnapshot,
    voter_dirs: Sequence[tuple[int, Path]],
    *,
    metadata_version: MetadataVersion,
    zookeeper: str,
    controller_listener: str = "CONTROLLER",
    target_kafka: str = "3.9",
) -> OperatorSequence:
    """The online path into local voter directories (`--voter ID=DIR`): the controllers start
    after the cutover, on the directories zk2kraft wrote (their addresses are the operator's)."""
    addresses: dict[int, tuple[str, int] | None] = {n: None for n, _ in voter_dirs}
    dirs = {n: str(d) for n, d in voter_dirs}
    voters = voters_string(addresses)
    mv = metadata_version.name
    controllers, notes = migration_controllers(
        snapshot, addresses, dirs, voters=voters, zookeeper=zookeeper,
        listener=controller_listener, protocol="PLAINTEXT", election_timeout=False)
    brokers = migrating_brokers(snapshot, voters=voters, listener=controller_listener,
                                protocol="PLAINTEXT", mv=mv)
    cluster_id = snapshot.cluster_id.cluster_id if snapshot.cluster_id is not None else None
    voter_flags = " ".join(f"--voter {n}={d}" for n, d in dirs.items())
    steps = _voter_steps(voter_flags=voter_flags, voters=voters, mv=mv, zookeeper=zookeeper,
                         dirs=dirs)
    return OperatorSequence(ONLINE_VOTER, cluster_id, mv, target_kafka, None, controllers,
                            brokers, (), steps + _upgrade(target_kafka, voters),
                            (*address_notes(), *notes))


def _upgrade(target_kafka: str, voters: str) -> tuple[Step, ...]:
    """Nothing for 3.9; Kafka's rolling upgrade to a 4.N line after Finalise."""
    return () if target_kafka == "3.9" else (upgrade_step(target_kafka, voters),)


def _standin_steps(spec: StandInSpec, *, voters: str, mv: str, zookeeper: str,
                   cluster_id: str | None, controller_ids: Sequence[int],
                   listener: str, bootstrap: str) -> tuple[Step, ...]:
    standin = f"{spec.node_id}@{bracketed_host(spec.listen[0])}:{spec.listen[1]}={spec.log_dir}"
    cid = cluster_id or "<the id in /cluster/id>"
    others = " ".join(f"--controller {n}@{bracketed_host(h)}:{p}"
                      for n, (h, p) in spec.voters.items() if n != spec.node_id)
    revert_zk = revert_zk_action(zookeeper, f"--voter {spec.node_id}={spec.log_dir}",
                                 " (and zk2kraft if it still runs)")
    journal = str(default_journal_dir(spec.log_dir) / JOURNAL_FILE)
    return (
        prepare_step(mv),
        migration_mode_step(voters),
        Step("Provision the controllers and start zk2kraft's stand-in",
             (f"format each controller's metadata.log.dir with the cluster's id: "
              f"kafka-storage.sh format --cluster-id={cid} --release-version {mv} "
              "--config controller.properties (static voters: no --standalone, no "
              "--initial-controllers)",
              f"start zk2kraft: zk2kraft migrate --zookeeper {zookeeper} --standin {standin} "
              f"{others} --metadata-version {mv} --cutover manual --bootstrap-server "
              f"{bootstrap} --json report.json --html report.html "
              "(it listens on its slot and asks for votes for up to 120 s)",
              f"then, within those 120 s, start controllers "
              f"{', '.join(map(str, controller_ids))} with their properties above; they create "
              "an empty /migration (zk2kraft takes it over at the fence), vote for the "
              "stand-in and replicate the pre-copy and the mirror to their own disks"),
             "before the fence (pre-copy, mirror): stop zk2kraft (Ctrl-C) and the controllers, "
             f"clear their metadata.log.dirs, {spec.log_dir} and zk2kraft's journal {journal}; "
             "ZooKeeper's controller never stopped; the brokers in migration mode may have "
             "fetched the discarded log, so to leave migration mode, "
             f"{REVERT_BROKERS_FETCHED}; or, to start again instead, "
             + start_over(connect=zookeeper, standin_dir=str(spec.log_dir), journal=journal,
                          followed=None, rerun="run step 3's zk2kraft migrate command again")),
        Step("Cut over",
             ("press Enter in zk2kraft's terminal or kill -USR1 its pid: it fences ZooKeeper's "
              "controller, commits the final delta and ZkMigrationState MIGRATION, writes "
              "/migration and resigns (EndQuorumEpoch); a controller is elected, claims "
              "/controller and enters dual-write (it sends the brokers full metadata)",
              f"check: zk2kraft verify --zookeeper {zookeeper} --voter N=DIR (a controller's "
              f"metadata.log.dir) --quorum-voters {voters}"),
             f"{revert_zk}; then {REVERT_BROKERS_FETCHED}"),
        Step(f"Give the stand-in's slot {spec.node_id} to a real controller",
             (f"after zk2kraft exited, start a controller with node.id={spec.node_id}, "
              f"listeners={listener}://{bracketed_host(spec.listen[0])}:{spec.listen[1]}, "
              f"the other controllers' properties and the stand-in's directory "
              f"{spec.log_dir} as its metadata.log.dir and log.dirs; it follows and catches up",),
             f"as for step 4: {revert_zk}; then {REVERT_BROKERS_FETCHED}"),
        to_kraft_step(revert_zk),
        finalise_step(voters),
    )


def _voter_steps(*, voter_flags: str, voters: str, mv: str, zookeeper: str,
                 dirs: Mapping[int, str]) -> tuple[Step, ...]:
    revert_zk = revert_zk_action(zookeeper, voter_flags, "")
    return (
        prepare_step(mv),
        migration_mode_step(voters),
        Step("Pre-copy and mirror into the voter directories",
             (f"configure controllers {', '.join(map(str, dirs))} with their properties above "
              "but do not start them and do not run kafka-storage format: zk2kraft writes "
              "their directories, meta.properties included",
              f"zk2kraft migrate --zookeeper {zookeeper} {voter_flags} --metadata-version {mv} "
              "--cutover manual --on-cutover '<a command that starts the controllers>' "
              "--json report.json (it holds each directory's .lock until the cutover)"),
             "before the cutover: stop zk2kraft (Ctrl-C) and clear the voter directories; "
             f"ZooKeeper's controller never stopped; then, to leave migration mode, "
             f"{REVERT_BROKERS}"),
        Step("Cut over",
             ("press Enter in zk2kraft's terminal or kill -USR1 its pid: it fences ZooKeeper's "
              "controller, commits the final delta and ZkMigrationState MIGRATION, writes "
              "/migration, releases the locks and runs --on-cutover; a controller is elected, "
              "claims /controller and enters dual-write",
              f"check: zk2kraft verify --zookeeper {zookeeper} {voter_flags}"),
             f"{revert_zk}; then {REVERT_BROKERS_FETCHED}"),
        to_kraft_step(revert_zk),
        finalise_step(voters),
    )
