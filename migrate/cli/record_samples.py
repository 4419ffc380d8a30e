"""A few records of each type, redacted, for the dry-run report of `plan`.

Operators reviewing a migration want to see what `migrate` will write, not just how much: the
first records of each type, in log order, as `kafka-dump-log` would name their fields. Secrets
are redacted here, before anything is rendered (I7), by the rule `inspect` uses too
(`writers.redact_record_data`): SCRAM salts and keys, delegation-token details other than the
token id, and values of sensitive configs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from writers import FieldValue, MetadataRecord, redact_record_data

__all__ = ["record_samples", "redact_record"]



def redact_record(record: MetadataRecord) -> dict[str, FieldValue]:
    """Return the record's data with every secret field replaced by `writers.REDACTED`.

    Bytes that are not secrets are shown as hex, so the result is JSON- and text-safe.
    """
    return {k: _safe(v) for k, v in redact_record_data(record.type, record.data).items()}


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
