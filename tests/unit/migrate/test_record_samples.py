"""Record samples for `plan`: first records per type, secrets redacted."""

from __future__ import annotations

from migrate.cli.record_samples import record_samples, redact_record
from writers import REDACTED, MetadataRecord


def test_scram_token_and_sensitive_config_values_are_redacted() -> None:
    scram = MetadataRecord("USER_SCRAM_CREDENTIAL_RECORD", 0, {
        "name": "alice", "mechanism": 1, "salt": b"SALTSALT", "storedKey": b"STORED",
        "serverKey": b"SERVER", "iterations": 4096})
    token = MetadataRecord("DELEGATION_TOKEN_RECORD", 0, {
        "owner": "User:alice", "renewers": ["User:bob"], "tokenId": "tk", "issueTimestamp": 1})
    cfg = MetadataRecord("CONFIG_RECORD", 0, {
        "resourceType": 4, "resourceName": "1", "name": "ssl.keystore.password", "value": "pw"})
    plain = MetadataRecord("CONFIG_RECORD", 0, {
        "resourceType": 2, "resourceName": "t", "name": "retention.ms", "value": "1000"})
    assert redact_record(scram) == {"name": "alice", "mechanism": 1, "salt": REDACTED,
                                    "storedKey": REDACTED, "serverKey": REDACTED,
                                    "iterations": 4096}
    assert redact_record(token) == {"owner": REDACTED, "renewers": REDACTED, "tokenId": "tk",
                                    "issueTimestamp": REDACTED}
    assert redact_record(cfg)["value"] == REDACTED
    assert redact_record(plain)["value"] == "1000"


def test_first_records_per_type_in_log_order() -> None:
    recs = [MetadataRecord("TOPIC_RECORD", 0, {"name": f"t{i}"}) for i in range(5)]
    recs.insert(1, MetadataRecord("PARTITION_RECORD", 0, {"partitionId": 0, "x": b"\x01"}))
    samples = record_samples(recs, per_type=2)
    assert list(samples) == ["TOPIC_RECORD", "PARTITION_RECORD"]
    assert samples["TOPIC_RECORD"] == [{"name": "t0"}, {"name": "t1"}]
    assert samples["PARTITION_RECORD"] == [{"partitionId": 0, "x": "01"}]
