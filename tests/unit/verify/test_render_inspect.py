"""inspect's rendering: redaction policy, JSON shape, and the rich view on a fixed-width console."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from rich.console import Console

from verify import RedactionPolicy, inspect_json_lines, redact_record_json, render_inspect
from writers import (
    LogCorruptionError,
    MetadataRecord,
    QuorumWriter,
    VoterDir,
    batch_records,
    open_log_source,
)

SALT, STORED, SERVER = b"salt-bytes-1234", b"stored-key-bytes", b"server-key-bytes"
RECORDS = [
    MetadataRecord("FEATURE_LEVEL_RECORD", 0, {"name": "metadata.version", "featureLevel": 21}),
    MetadataRecord("TOPIC_RECORD", 0, {"name": "orders [1, 2]",
                                       "topicId": "Wn5eU0aORC2O8zaHk8aM7Q"}),
    MetadataRecord("CONFIG_RECORD", 0, {"resourceType": 4, "resourceName": "1",
                                        "name": "ssl.key.password", "value": "hunter2"}),
    MetadataRecord("CONFIG_RECORD", 0, {"resourceType": 2, "resourceName": "orders [1, 2]",
                                        "name": "retention.ms", "value": "1000"}),
    MetadataRecord("USER_SCRAM_CREDENTIAL_RECORD", 0, {
        "name": "alice", "mechanism": 1, "salt": SALT, "storedKey": STORED,
        "serverKey": SERVER, "iterations": 4096}),
    MetadataRecord("DELEGATION_TOKEN_RECORD", 0, {
        "owner": "User:alice", "requester": "User:alice", "renewers": ["User:renewer"],
        "issueTimestamp": 1, "maxTimestamp": 3, "expirationTimestamp": 2, "tokenId": "tok-1"}),
]
SECRETS = ["hunter2", "User:renewer", *(base64.b64encode(b).decode() for b in
                                        (SALT, STORED, SERVER))]


@pytest.fixture
def voter(tmp_path: Path) -> Path:
    with QuorumWriter([VoterDir(tmp_path, node_id=2, cluster_id="renderCluster000000001")]) as q:
        for batch, _ in batch_records(RECORDS, base_offset=0, leader_epoch=4,
                                      timestamp_ms=1_700_000_000_000, max_records=4):
            q.append_batch(batch)
        q.write_quorum_state(leader_epoch=4)
    return tmp_path


def test_json_lines_are_redacted_by_default_and_exact_when_disabled(voter: Path) -> None:
    strict = list(inspect_json_lines(open_log_source(voter)))
    assert [o["offset"] for o in strict] == list(range(len(RECORDS)))
    text = repr(strict)
    assert not [s for s in SECRETS if s in text]
    assert strict[3]["data"]["value"] == "1000"  # non-sensitive config values stay
    assert strict[5]["data"]["tokenId"] == "tok-1"
    raw = list(inspect_json_lines(open_log_source(voter), RedactionPolicy.DISABLED))
    assert all(s in repr(raw) for s in SECRETS)
    assert raw[4]["data"]["storedKey"] == base64.b64encode(STORED).decode()


def test_redaction_leaves_other_records_untouched() -> None:
    obj = {"type": "TOPIC_RECORD", "version": 0, "data": {"name": "t", "topicId": "x"}}
    assert redact_record_json(obj, RedactionPolicy.STRICT) is obj


def test_rich_view_fixed_width_no_colour_no_secrets(voter: Path) -> None:
    out = io.StringIO()
    console = Console(file=out, width=100, color_system=None)
    summary = render_inspect(console, open_log_source(voter), max_records=3)
    text = out.getvalue()
    assert summary.total_records == len(RECORDS) and len(summary.records) == 3
    assert "renderCluster000000001" in text and "leaderEpoch 4" in text
    assert "batches in 00000000000000000000.log" in text
    assert "records (3 of 6)" in text
    assert "orders [1, 2]" in text  # literal text, not rich markup
    assert "\x1b[" not in text
    full = io.StringIO()
    render_inspect(Console(file=full, width=100, color_system=None), open_log_source(voter),
                   max_records=100)
    assert not [s for s in SECRETS if s in full.getvalue()]


def test_rich_view_prints_what_came_before_damage(voter: Path) -> None:
    seg = voter / "__cluster_metadata-0" / "00000000000000000000.log"
    first = next(open_log_source(voter).entries())
    data = bytearray(seg.read_bytes())
    data[first.size + 30] ^= 1
    seg.write_bytes(bytes(data))
    out = io.StringIO()
    with pytest.raises(LogCorruptionError, match="CRC-32C"):
        render_inspect(Console(file=out, width=100, color_system=None), open_log_source(voter))
    assert "1 batches, 4 records" in out.getvalue()
