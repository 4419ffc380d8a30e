"""`DelegationTokenRecord`s from `/delegation_token/tokens/<tokenId>`.

ZK-mode Kafka stores the principals sanitized (`User%3Aalice`); KRaft stores them as principals
(`User:alice`). Token znodes older than JSON version 3 have no requester; Kafka then takes the
owner as the requester, and so do we. The token's HMAC is not in ZooKeeper (brokers derive it
from the shared secret), so it is not in the record either. Records exist only at
metadata.version >= 3.6-IV2 (`translate` gates that). Token data is never logged.
"""

from __future__ import annotations

from migrate.errors import TranslationError
from writers import FieldValue, MetadataRecord, desanitize
from zkreader import DelegationToken

__all__ = ["token_path", "token_records"]


def token_path(token: DelegationToken) -> str:
    """Return the znode path of a token."""
    return f"/delegation_token/tokens/{token.token_id}"


def _principal(stored: str, what: str, path: str) -> str:
    try:
        return desanitize(stored)
    except ValueError as exc:
        raise TranslationError(f"{path}: {what} is not validly sanitized: {exc}") from None


def token_records(token: DelegationToken) -> list[MetadataRecord]:
    """Return the `DelegationTokenRecord` of one token znode.

    Args:
        token: the decoded token znode.

    Returns:
        A one-element list.

    Raises:
        TranslationError: a principal is badly sanitized.
    """
    path = token_path(token)
    owner = _principal(token.owner, "owner", path)
    requester = (
        owner if token.requester is None else _principal(token.requester, "requester", path)
    )
    data: dict[str, FieldValue] = {
        "owner": owner,
        "requester": requester,
        "renewers": [_principal(r, "renewer", path) for r in token.renewers],
        "issueTimestamp": token.issue_timestamp_ms,
        "maxTimestamp": token.max_timestamp_ms,
        "expirationTimestamp": token.expiry_timestamp_ms,
        "tokenId": token.token_id,
    }
    return [MetadataRecord("DELEGATION_TOKEN_RECORD", 0, data)]
