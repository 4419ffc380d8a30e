"""A few records of each type, redacted, for the dry-run report of `plan`.

Operators reviewing a migration want to see what `migrate` will write, not just how much: the
first records of each type, in log order, as `kafka-dump-log` would name their fields. Secrets
are redacted here, before anything is rendered (I7): SCRAM salts and keys, delegation-token
details other than the token id, and values of sensitive configs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from writers import REDACTED, FieldValue, MetadataRecord, is_sensitive_config

__all__ = ["record_samples", "redact_record"]

_SCRAM_FIELDS = frozenset({"salt", "storedKey", "serverKey", "saltedPassword"})
_TOKEN_KEEP = frozenset({"tokenId"})


def redact_record(record: MetadataRecord) -> dict[str, FieldValue]:
    """Return the record's data with every secret field replaced by `REDACTED`.

    Bytes that are not secrets are shown as hex, so the result is JSON- and text-safe.
    """
    data = dict(record.data)
    if record.type == "USER_SCRAM_CREDENTIAL_RECORD":
        return {k: (REDACTED if k in _SCRAM_FIELDS else _safe(v)) for k, v in data.items()}
    if record.type == "DELEGATION_TOKEN_RECORD":
        return {k: (v if k in _TOKEN_KEEP else REDACTED) for k, v in data.items()}
    if record.type == "CONFIG_RECORD":
        name, value = data.get("name"), data.get("value")
        if isinstance(name, str) and is_sensitive_config(name, str(value or "")):
            data["value"] = REDACTED
    return {k: _safe(v) for k, v in data.items()}


def _safe(value: FieldValue) -> FieldValue:
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, Mapping):
        return {k: _safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_safe(v) for v in value]
    return value


def record_samples(
    records: Iterable[MetadataRecord], *, per_type: int = 2
) -> dict[str, list[dict[str, FieldValue]]]:
    """Pick the first `per_type` records of each type, redacted, keyed by type in log order.

    Args:
        records: the records `migrate` would write, in log order.
        per_type: how many of each type to keep.
    """
    samples: dict[str, list[dict[str, FieldValue]]] = {}
    for record in records:
        kept = samples.setdefault(record.type, [])
        if len(kept) < per_type:
            kept.append(redact_record(record))
    return samples
