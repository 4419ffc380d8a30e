"""Judging what a KRaft controller reads from its metadata.log.dir before it reads the log.

A log can match ZooKeeper record for record and the quorum still refuse to start. At start a
Kafka 3.9 controller reads, and refuses on:

- `meta.properties` (`MetaPropertiesEnsemble`): `version=1`, `cluster.id` (must be the cluster's,
  which for a migration is ZooKeeper's `/cluster/id`) and `node.id` (must be the controller's own
  `node.id`, i.e. the `--voter ID` given for this directory: swapped `--voter` ids fail here);
- `__cluster_metadata-0/quorum-state` (`FileQuorumStateStore`, `QuorumState.initialize`): every
  field of its data_version is mandatory (a damaged file stops the controller); with
  data_version 0 it stores the voter set, which must be the configured `controller.quorum.voters`
  (the `--voter` ids: a file from another quorum means the directory is not this quorum's), and a
  leader or vote it records must name a voter. A missing file is fine (Kafka starts at the log's
  epoch and writes it), and so is an epoch below the log's (Kafka logs a warning and moves up);
- `__cluster_metadata-0/partition.metadata`: its topic id must be the metadata topic's
  (`AAAAAAAAAAAAAAAAAAAAAQ`, Uuid(0, 1)); a missing file is created by Kafka.

A value that differs is a `Difference` of kind `voter_files` (exit 1, like any parity
difference); a file that is not in Kafka's format at all is `VoterFileFormatError` (exit 2).
`verify` reports these, `plan --voter` blocks on them, and `migrate` refuses to call a voter
holding them a no-op. Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from verify._report import Difference
from writers import (
    METADATA_PARTITION_DIR,
    METADATA_TOPIC_ID,
    VoterFileFormatError,
    read_meta_properties,
    read_partition_metadata,
    read_quorum_state,
)

__all__ = ["QuorumStateFacts", "quorum_state_facts", "voter_file_differences"]

KIND = "voter_files"


class QuorumStateFacts:
    """The parts of a `quorum-state` file a controller acts on (validated).

    Attributes:
        leader_epoch: `leaderEpoch`.
        leader_id: `leaderId` (-1: none).
        voted_id: `votedId` (-1: none).
        voters: the `currentVoters` ids (data_version 0), or None (data_version 1 keeps them in
            the log instead).
    """

    __slots__ = ("leader_epoch", "leader_id", "voted_id", "voters")

    def __init__(self, leader_epoch: int, leader_id: int, voted_id: int,
                 voters: frozenset[int] | None) -> None:
        self.leader_epoch = leader_epoch
        self.leader_id = leader_id
        self.voted_id = voted_id
        self.voters = voters


def _int(path: Path, data: dict[str, object], key: str, minimum: int) -> int:
    value = data.get(key)
    if type(value) is not int or value < minimum:
        raise VoterFileFormatError(f"{path}: {key!r} is {value!r}, expected an integer >= "
                                   f"{minimum}")
    return value


def quorum_state_facts(partition_dir: Path) -> QuorumStateFacts | None:
    """Read and check `quorum-state` in a `__cluster_metadata-0` dir; None when absent.

    Raises:
        VoterFileFormatError: not Kafka's quorum-state (JSON object with data_version 0 or 1,
            integer epoch/leader/vote, a list of `{"voterId": n}`) (exit 2).
        VoterUnavailableError: it cannot be read (exit 3).
    """
    data = read_quorum_state(partition_dir)
    if data is None:
        return None
    path = Path(partition_dir) / "quorum-state"
    version = data.get("data_version")
    if version not in (0, 1) or type(version) is not int:
        raise VoterFileFormatError(f"{path}: data_version {version!r} (Kafka writes 0 or 1)")
    epoch = _int(path, data, "leaderEpoch", 0)
    leader = _int(path, data, "leaderId", -1)
    voted = _int(path, data, "votedId", -1)
    voters: frozenset[int] | None = None
    if version == 0:
        raw = data.get("currentVoters")
        if not isinstance(raw, list) or not all(
                isinstance(v, dict) and type(v.get("voterId")) is int for v in raw):
            raise VoterFileFormatError(
                f"{path}: 'currentVoters' is not a list of {{\"voterId\": id}}")
        voters = frozenset(int(v["voterId"]) for v in raw)
    return QuorumStateFacts(epoch, leader, voted, voters)


def voter_file_differences(
    voters: Sequence[tuple[int, Path]],
    *,
    cluster_id: str | None,
    voter_ids: Collection[int] | None = None,
) -> tuple[Difference, ...]:
    """What would stop each voter's controller at start (module docstring for the rules).

    Args:
        voters: the `--voter` (node id, metadata.log.dir) pairs: the configured voter set.
        cluster_id: ZooKeeper's `/cluster/id` (None: not known, not compared).
        voter_ids: the configured voter set, when `voters` holds only some of the voters
            (default: the ids in `voters`).

    Raises:
        VoterFileFormatError: a file is not in Kafka's format (exit 2, names it).
        VoterUnavailableError: a file cannot be read (exit 3).
    """
    configured = frozenset(voter_ids if voter_ids is not None
                           else (node_id for node_id, _ in voters))
    out: list[Difference] = []
    for node_id, directory in voters:
        key = str(node_id)

        def diff(field: str, expected: object, found: object, *, key: str = key) -> None:
            out.append(Difference(KIND, key, field, expected, found))  # type: ignore[arg-type]

        meta = read_meta_properties(Path(directory))
        if meta is None:
            diff("meta.properties", "present", f"missing in {directory}")
        else:
            if cluster_id is not None and meta.cluster_id != cluster_id:
                diff("meta.properties cluster.id", cluster_id, meta.cluster_id)
            if meta.node_id != node_id:
                diff("meta.properties node.id", node_id, meta.node_id)
        partition = Path(directory) / METADATA_PARTITION_DIR
        state = quorum_state_facts(partition)
        if state is not None:
            if state.voters is not None and state.voters != configured:
                diff("quorum-state currentVoters", sorted(configured), sorted(state.voters))
            allowed = state.voters if state.voters is not None else configured
            for name, value in (("leaderId", state.leader_id), ("votedId", state.voted_id)):
                if value != -1 and value not in allowed:
                    diff(f"quorum-state {name}", f"-1 or one of {sorted(allowed)}", value)
        topic_id = read_partition_metadata(partition)
        if topic_id is not None and topic_id != METADATA_TOPIC_ID:
            diff("partition.metadata topic_id", METADATA_TOPIC_ID, topic_id)
    return tuple(out)
