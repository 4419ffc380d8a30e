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
`verify` reports these, `plan --voter` shows them in each voter's parity and blocks on those
`migrate` refuses, and `migrate` refuses to call a voter holding them a no-op (it rewrites only
a quorum-state no controller acted on). Whether a quorum-state's voter set is right is decided
once, by `quorum_state_differences`, for all three; a voter set the tool cannot know is
NOT_CHECKED ("pass --quorum-voters"), never a difference. Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from verify._report import NOT_CHECKED, Difference, JsonValue
from writers import (
    METADATA_PARTITION_DIR,
    METADATA_TOPIC_ID,
    VoterFileFormatError,
    read_leader_epoch_checkpoint,
    read_meta_properties,
    read_partition_metadata,
    read_quorum_state,
)

__all__ = ["QuorumStateFacts", "quorum_state_differences", "quorum_state_facts",
           "voter_file_differences"]

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
    # read_quorum_state checked Kafka's fields and types; here, the values a controller uses
    epoch = _int(path, data, "leaderEpoch", 0)
    leader = _int(path, data, "leaderId", -1)
    voted = _int(path, data, "votedId", -1)
    raw = data.get("currentVoters") if data["data_version"] == 0 else None
    voters = (frozenset(int(v["voterId"]) for v in raw)
              if isinstance(raw, list) else None)
    return QuorumStateFacts(epoch, leader, voted, voters)


_UNKNOWN_SET = "not checked: pass --quorum-voters"


def _ids(ids: Collection[int]) -> list[JsonValue]:
    return list(sorted(ids))


def quorum_state_differences(
    node_id: int,
    state: QuorumStateFacts,
    *,
    given: Collection[int],
    quorum: Collection[int] | None,
) -> tuple[Difference, ...]:
    """Judge one voter's `quorum-state` against the voter set: THE rule verify, plan and
    migrate all apply.

    A Kafka 3.9 controller refuses a data_version-0 file whose `currentVoters` is not its
    configured `controller.quorum.voters`, and a leader or vote that names no voter. With the
    voter set known (`quorum`), the file must list exactly it. Without it, every `--voter` is a
    voter (so a file lacking one is wrong), but a file listing more voters than the `--voter`s
    may be right (the other controllers' disks are on other hosts): that is NOT_CHECKED, not a
    difference.

    Args:
        node_id: the voter whose file this is (key of the differences).
        state: its validated `quorum-state`.
        given: the `--voter` ids.
        quorum: the configured voter set when known (`verify --quorum-voters`; `plan` and
            `migrate` write quorum-state naming exactly their `--voter`s), else None.

    Returns:
        `voter_files` entries: differences, and NOT_CHECKED ones saying what would let them be
        checked.
    """
    key = str(node_id)
    out: list[Difference] = []
    known = frozenset(quorum) if quorum is not None else None
    listed = state.voters
    if listed is not None:
        if known is not None and listed != known:
            out.append(Difference(KIND, key, "quorum-state currentVoters", _ids(known),
                                  _ids(listed)))
        elif known is None and not frozenset(given) <= listed:
            out.append(Difference(KIND, key, "quorum-state currentVoters", _ids(given),
                                  _ids(listed)))
        elif known is None and listed != frozenset(given):
            out.append(Difference(
                KIND, key, "quorum-state currentVoters", _UNKNOWN_SET, _ids(listed),
                verdict=NOT_CHECKED,
                reason=f"it lists voters besides the --voter ids {_ids(given)}; the "
                       "controllers' controller.quorum.voters is not known"))
    allowed = listed if listed is not None else known
    for name, value in (("leaderId", state.leader_id), ("votedId", state.voted_id)):
        if value == -1 or (allowed is not None and value in allowed):
            continue
        if allowed is None and value in given:
            continue
        if allowed is None:  # data_version 1 keeps the voters in the log: unknown here
            out.append(Difference(KIND, key, f"quorum-state {name}", _UNKNOWN_SET, value,
                                  verdict=NOT_CHECKED,
                                  reason="the voter set is not in this quorum-state"))
        else:
            out.append(Difference(KIND, key, f"quorum-state {name}",
                                  f"-1 or one of {sorted(allowed)}", value))
    return tuple(out)


def voter_file_differences(
    voters: Sequence[tuple[int, Path]],
    *,
    cluster_id: str | None,
    voter_ids: Collection[int] | None = None,
) -> tuple[Difference, ...]:
    """What would stop each voter's controller at start (module docstring for the rules).

    Args:
        voters: the `--voter` (node id, metadata.log.dir) pairs.
        cluster_id: ZooKeeper's `/cluster/id` (None: not known, not compared).
        voter_ids: the configured voter set when known (`--quorum-voters`, or the `--voter`
            ids of `plan` / `migrate`, which write exactly those); None: not known, and a
            quorum-state listing more voters than the `--voter`s is NOT_CHECKED
            (`quorum_state_differences`).

    Raises:
        VoterFileFormatError: a file is not in Kafka's format (exit 2, names it).
        VoterUnavailableError: a file cannot be read (exit 3).
    """
    given = [node_id for node_id, _ in voters]
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
            out.extend(quorum_state_differences(node_id, state, given=given, quorum=voter_ids))
        read_leader_epoch_checkpoint(partition)  # its format: a missing one is fine
        topic_id = read_partition_metadata(partition)
        if topic_id is not None and topic_id != METADATA_TOPIC_ID:
            diff("partition.metadata topic_id", METADATA_TOPIC_ID, topic_id)
    return tuple(out)
