"""Staging and promotion of voter logs (writers/log/staging.py) on real directories.

Crashes at each step are tested through the CLI (tests/fault/test_migrate_faults.py); these
cover the pieces directly: promotion into empty and formatted dirs, the read-back's refusals,
stale staging removal and the free-space check.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import crc32c
import pytest

from writers import (
    STAGING_DIR_NAME,
    EncodedBatch,
    ExpectedLog,
    StagedVoter,
    VoterStateError,
    VoterUnavailableError,
    check_free_space,
    read_back,
    read_meta_properties,
    recover_interrupted,
    stage_and_promote,
)

CLUSTER = "hoZ1PKcBRjKUt1oizWckJQ"
FORMATTED = ("version=1\ncluster.id=" + CLUSTER
             + "\nnode.id=2\ndirectory.id=F5WsdK3isSyAWm321ap4vQ\n")


def frame(base: int, count: int = 1) -> EncodedBatch:
    after_crc = struct.pack(">hiqqqhii", 0, count - 1, 0, 0, -1, -1, -1, count) + bytes(16)
    head = struct.pack(">qiibI", base, 9 + len(after_crc), 1, 2, crc32c.crc32c(after_crc))
    return EncodedBatch(base, base + count - 1, 1, head + after_crc)


BATCHES = [frame(0, 2), frame(2, 3), frame(5)]


def promote(voters: list[StagedVoter]) -> None:
    stage_and_promote(voters, cluster_id=CLUSTER, batches=BATCHES, quorum_voters=[1, 2, 3],
                      leader_id=-1, leader_epoch=1)


def test_promoted_into_empty_and_formatted_dirs_and_read_back(tmp_path: Path) -> None:
    voters = [StagedVoter(i, tmp_path / f"c{i}") for i in (1, 2, 3)]
    for v in voters:
        v.path.mkdir()
    (voters[1].path / "meta.properties").write_text(FORMATTED)  # kafka-storage format's
    (voters[1].path / "__cluster_metadata-0").mkdir()  # a first start's empty log dir
    promote(voters)
    for v in voters:
        read_back(v, ExpectedLog.of(BATCHES), cluster_id=CLUSTER, quorum_voters=[1, 2, 3],
                  leader_id=-1, leader_epoch=1)
        assert not (v.path / STAGING_DIR_NAME).exists()
    assert (voters[1].path / "meta.properties").read_text() == FORMATTED  # kept
    seg = "__cluster_metadata-0/00000000000000000000.log"
    assert (voters[0].path / seg).read_bytes() == b"".join(b.data for b in BATCHES)


def test_read_back_names_what_differs(tmp_path: Path) -> None:
    v = StagedVoter(1, tmp_path / "c1")
    v.path.mkdir()
    promote([v])
    with pytest.raises(VoterStateError, match="expected leader 1"):
        read_back(v, ExpectedLog.of(BATCHES), cluster_id=CLUSTER, quorum_voters=[1, 2, 3],
                  leader_id=1, leader_epoch=1)
    with pytest.raises(VoterStateError, match="3 batches, .* were written"):
        read_back(v, ExpectedLog.of(BATCHES[:2] + [frame(5, 2)]), cluster_id=CLUSTER,
                  quorum_voters=[1, 2, 3], leader_id=-1, leader_epoch=1)
    meta = read_meta_properties(v.path)
    assert meta is not None and meta.node_id == 1


def test_an_incomplete_staging_copy_is_removed_and_nothing_promoted(tmp_path: Path) -> None:
    v = StagedVoter(1, tmp_path / "c1")
    (v.staging / "__cluster_metadata-0").mkdir(parents=True)
    (v.staging / "__cluster_metadata-0" / "00000000000000000000.log").write_bytes(b"torn")
    done = recover_interrupted([v])
    assert len(done) == 1 and "removed the incomplete staging copy" in done[0]
    assert sorted(p.name for p in v.path.iterdir()) == []


def test_a_marked_promotion_is_finished_for_every_voter_it_names(tmp_path: Path) -> None:
    voters = [StagedVoter(i, tmp_path / f"c{i}") for i in (1, 2)]
    for v in voters:  # both staged and marked; voter 1 already promoted, voter 2 not yet
        part = v.staging / "__cluster_metadata-0"
        part.mkdir(parents=True)
        (part / "00000000000000000000.log").write_bytes(BATCHES[0].data)
        (v.staging / "PROMOTE").write_text(json.dumps([[w.node_id, str(w.path)]
                                                       for w in voters]))
    (voters[0].staging / "__cluster_metadata-0").rename(voters[0].path / "__cluster_metadata-0")
    done = recover_interrupted(voters)
    assert done == ["voter 2: finished the interrupted promotion of its staged metadata log"]
    for v in voters:
        assert (v.path / "__cluster_metadata-0" / "00000000000000000000.log").exists()
        assert not v.staging.exists()
    # a marker naming a voter that is not in this run: refused, nothing touched
    voters[0].staging.mkdir()
    (voters[0].staging / "PROMOTE").write_text(json.dumps([[9, str(tmp_path / "c9")]]))
    with pytest.raises(VoterStateError, match="same --voter flags"):
        recover_interrupted(voters)
    assert (voters[0].staging / "PROMOTE").exists()


def test_free_space_is_checked_per_filesystem_for_all_its_voters(tmp_path: Path) -> None:
    voters = [StagedVoter(i, tmp_path / f"c{i}") for i in (1, 2)]
    for v in voters:
        v.path.mkdir()
    check_free_space(voters, 1024)
    with pytest.raises(VoterUnavailableError, match=r"not enough free space .* \(2 x ") as err:
        check_free_space(voters, 1 << 60)
    assert "voter 1" in str(err.value) and "voter 2" in str(err.value)
