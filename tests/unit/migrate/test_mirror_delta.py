"""LogState: the framing a resume reads back from the log (is the "ZK Migration" transaction
open, was ZkMigrationStateRecord written). Records written by hand from Kafka's definitions."""

from __future__ import annotations

from migrate._mirror_delta import LogState
from writers import MetadataRecord

HEADER = [
    MetadataRecord("FEATURE_LEVEL_RECORD", 0, {"name": "metadata.version", "featureLevel": 21}),
    MetadataRecord("BEGIN_TRANSACTION_RECORD", 0, {"name": "ZK Migration"}),
    MetadataRecord("TOPIC_RECORD", 0, {"name": "a", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"}),
]


def test_an_empty_log_has_no_transaction_and_no_migration_state() -> None:
    s = LogState()
    assert not s.transaction_open and s.migration_state is None


def test_a_pre_copy_leaves_the_transaction_open() -> None:
    s = LogState()
    s.apply(HEADER)
    assert s.transaction_open and s.migration_state is None


def test_closing_records_are_seen() -> None:
    s = LogState()
    s.apply(HEADER + [MetadataRecord("ZK_MIGRATION_STATE_RECORD", 0, {"zkMigrationState": 1}),
                      MetadataRecord("END_TRANSACTION_RECORD", 0, {})])
    assert not s.transaction_open and s.migration_state == 1


def test_an_aborted_transaction_is_closed() -> None:
    s = LogState()
    s.apply(HEADER + [MetadataRecord("ABORT_TRANSACTION_RECORD", 0, {})])
    assert not s.transaction_open
