"""kraft.version 1 (KIP-853 dynamic voters): real 3.9.1 controllers follow the stand-in, and its
slot is removed afterwards.

Every voter, the stand-in's directory included, is formatted by Kafka's own `kafka-storage format
--initial-controllers`; the controllers find the leader through
`controller.quorum.bootstrap.servers`. The stand-in needs nothing more than under static voters:
both controllers follow it, the handover elects one of them, and RemoveRaftVoter (what
`kafka-metadata-quorum remove-controller --controller-id 3000 --controller-directory-id …`
sends) makes the real leader commit a voter set without 3000, which DumpLogSegments shows.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.support.kafka import dump_log
from tests.support.standin import follower_segments, remove_raft_voter, standin_quorum
from writers import MetadataRecord

pytestmark = [pytest.mark.oracle, pytest.mark.slow]


def _voter_sets(segment: Path) -> list[list[int]]:
    """The voter ids of every KRaftVoters control record Kafka prints, in log order."""
    out = []
    for line in dump_log(segment).splitlines():
        at = line.find("KRaftVoters ")
        if at >= 0:
            doc = json.loads(line[at + len("KRaftVoters "):])
            out.append(sorted(v["voterId"] for v in doc["voters"]))
    return out


def test_dynamic_quorum_follows_the_standin_then_removes_its_slot(tmp_path: Path) -> None:
    with standin_quorum(tmp_path, dynamic=True) as q:
        assert q.standin.leader_epoch == 1
        q.standin.append_records(
            [MetadataRecord("FEATURE_LEVEL_RECORD", 0,
                            {"name": "metadata.version", "featureLevel": 21})],
            timestamp_ms=1_700_000_000_000)
        handover = q.standin.resign()
        assert handover.new_leader in (3001, 3002) and handover.new_epoch == 2
        leader = q.controller(handover.new_leader)
        leader.wait_for_log(r"Becoming the active controller", 60)
        q.standin.close()

        answer = remove_raft_voter(q.ports[handover.new_leader], q.cluster_id, 3000,
                                   q.directory_ids[3000])
        assert answer["errorCode"] == 0, answer
        segment = follower_segments(leader.metadata_log_dir)[0]
        deadline = time.monotonic() + 30
        sets = _voter_sets(segment)
        while sets[-1:] != [[3001, 3002]] and time.monotonic() < deadline:
            time.sleep(0.5)
            sets = _voter_sets(segment)
        for c in q.controllers:
            assert "leader=3000" in c.log_text()
    # the leader wrote the full initial set at its epoch start, then the set without the stand-in
    assert sets[0] == [3000, 3001, 3002] and sets[-1] == [3001, 3002], sets
