"""`DelegationTokenRecord`s from `/delegation_token/tokens/<tokenId>`.

ZK-mode Kafka stores the principals sanitized (`User%3Aalice`); KRaft stores them as principals
(`User:alice`). Token znodes older than JSON version 3 have no requester; Kafka then takes the
owner as the requester, and so do we. The token's HMAC is not in ZooKeeper (brokers derive it
from the shared secret), so it is not in the record either. Records exist only at
metadata.version >= 3.6-IV2 (`translate` gates that). Token data is never logged.

The module ends with the `delegation_token` kind's registry entry (`migrate.translate.kinds`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from typing import Any

from migrate.errors import TranslationError
from migrate.preflight.findings import Finding
from migrate.translate.kind import EntityContext, EntityDelta, EntityKind
from verify import MetadataImage
from writers import FieldValue, MetadataRecord, desanitize
from zkreader import ZK_KINDS, ClusterSnapshot, DelegationToken, EntityKey

__all__ = ["DELEGATION_TOKEN_KIND", "token_path", "token_records"]


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


# --------------------------------------------------------------- the delegation_token kind


def _token_from_nothing(key: EntityKey, snapshot: ClusterSnapshot,
                        ctx: EntityContext) -> EntityDelta:
    out = EntityDelta()
    token = snapshot.delegation_tokens.get(key.name)
    if token is not None:
        if ctx.mv.supports_delegation_tokens:
            out.records = token_records(token)
        else:
            out.blockers.append(Finding(
                "TOKENS_NEED_NEWER_METADATA_VERSION",
                f"delegation tokens cannot be written at metadata.version {ctx.mv.name} "
                "(they need 3.6-IV2 or later); clients using this token would be refused.",
                token_path(token),
            ))
    return out


def _diff_token(key: EntityKey, image: MetadataImage, snap: ClusterSnapshot,
                ctx: EntityContext) -> EntityDelta:
    held = image.delegation_tokens.tokens.get(key.name)
    wanted = _token_from_nothing(key, snap, ctx)
    if wanted.blockers:
        return wanted
    if not wanted.records:
        if held is None:
            return EntityDelta()
        return EntityDelta([MetadataRecord("REMOVE_DELEGATION_TOKEN_RECORD", 0,
                                           {"tokenId": key.name})])
    d: Mapping[str, Any] = wanted.records[0].data
    same = held is not None and (
        held.owner, held.requester, tuple(held.renewers), held.issue_timestamp,
        held.max_timestamp, held.expiration_timestamp,
    ) == (d["owner"], d["requester"], tuple(d["renewers"]), d["issueTimestamp"],
          d["maxTimestamp"], d["expirationTimestamp"])
    return EntityDelta() if same else wanted


def _token_keys(snapshot: ClusterSnapshot) -> Iterator[EntityKey]:
    for token_id in sorted(snapshot.delegation_tokens):
        yield EntityKey("delegation_token", token_id)


def _token_image_keys(image: MetadataImage, named: Collection[EntityKey]) -> Iterator[EntityKey]:
    for token_id in sorted(image.delegation_tokens.tokens):
        yield EntityKey("delegation_token", token_id)


DELEGATION_TOKEN_KIND = EntityKind(
    name="delegation_token",
    zk=ZK_KINDS["delegation_token"],
    from_nothing=_token_from_nothing,
    diff=_diff_token,
    snapshot_keys=_token_keys,
    image_keys=_token_image_keys,
    records=frozenset({"DELEGATION_TOKEN_RECORD", "REMOVE_DELEGATION_TOKEN_RECORD"}),
    expected=("delegation_tokens",),
    parity=("delegation_token",),
    snapshot_lines=("delegation_token",),
)
