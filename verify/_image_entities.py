"""The images of the keyed entities: configs, client quotas, SCRAM credentials, ACLs, the
producer-id block and delegation tokens."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from verify._frozen_map import FrozenMap
from writers import MetadataRecord

# --------------------------------------------------------------------------------- configs

ConfigResource = tuple[int, str]
"""(resourceType, resourceName): TOPIC 2, BROKER 4 (`""` = cluster default), BROKER_LOGGER 8."""


@dataclass(frozen=True, slots=True)
class ConfigsImage:
    """Dynamic configs per resource; a resource with no keys is absent."""

    resources: FrozenMap[ConfigResource, FrozenMap[str, str]]

    EMPTY: ClassVar[ConfigsImage]

    def records(self) -> list[MetadataRecord]:
        """One `ConfigRecord` per key, resources and keys sorted."""
        out: list[MetadataRecord] = []
        for rtype, rname in sorted(self.resources):
            conf = self.resources[(rtype, rname)]
            for key in sorted(conf):
                data: dict[str, Any] = {"resourceType": rtype, "resourceName": rname, "name": key,
                        "value": conf[key]}
                out.append(MetadataRecord("CONFIG_RECORD", 0, data))
        return out


# --------------------------------------------------------------------------- client quotas

QuotaEntity = tuple[tuple[str, str | None], ...]
"""((entityType, entityName-or-None-for-default), ...) sorted by entity type."""


@dataclass(frozen=True, slots=True)
class ClientQuotasImage:
    """Client quotas by entity: quota key → value (a double, as in `ClientQuotaRecord`)."""

    entities: FrozenMap[QuotaEntity, FrozenMap[str, float]]

    EMPTY: ClassVar[ClientQuotasImage]

    def records(self) -> list[MetadataRecord]:
        """One `ClientQuotaRecord` per key."""
        out: list[MetadataRecord] = []
        for entity in sorted(self.entities, key=_quota_sort_key):
            quotas = self.entities[entity]
            for key in sorted(quotas):
                data: dict[str, Any] = {
                    "entity": [{"entityType": t, "entityName": n} for t, n in entity],
                    "key": key,
                    "value": quotas[key],
                    "remove": False,
                }
                out.append(MetadataRecord("CLIENT_QUOTA_RECORD", 0, data))
        return out


def _quota_sort_key(entity: QuotaEntity) -> tuple[tuple[str, bool, str], ...]:
    return tuple((t, n is not None, n or "") for t, n in entity)


# ------------------------------------------------------------------------------------ SCRAM


@dataclass(frozen=True, slots=True)
class ScramCredential:
    """One SCRAM credential. Secret: its fields never appear in a repr, a log or a report."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def __repr__(self) -> str:
        return "ScramCredential(<redacted>)"

    def digest(self) -> str:
        """SHA-256 over (salt, storedKey, serverKey, iterations): what parity compares.

        One-way, so a difference can say *that* two credentials differ without holding them.
        """
        import hashlib

        h = hashlib.sha256()
        for part in (self.salt, self.stored_key, self.server_key):
            h.update(len(part).to_bytes(4, "big"))
            h.update(part)
        h.update(self.iterations.to_bytes(8, "big", signed=True))
        return h.hexdigest()


@dataclass(frozen=True, slots=True)
class ScramImage:
    """SCRAM credentials by (user name, mechanism code 1 = SHA-256, 2 = SHA-512)."""

    credentials: FrozenMap[tuple[str, int], ScramCredential]

    EMPTY: ClassVar[ScramImage]

    def records(self) -> list[MetadataRecord]:
        """One `UserScramCredentialRecord` per credential."""
        out: list[MetadataRecord] = []
        for name, mech in sorted(self.credentials):
            c = self.credentials[(name, mech)]
            data: dict[str, Any] = {
                "name": name, "mechanism": mech, "salt": c.salt, "storedKey": c.stored_key,
                "serverKey": c.server_key, "iterations": c.iterations,
            }
            out.append(MetadataRecord("USER_SCRAM_CREDENTIAL_RECORD", 0, data))
        return out


# -------------------------------------------------------------------------------------- ACLs


@dataclass(frozen=True, slots=True, order=True)
class StandardAcl:
    """One ACL binding with Kafka's byte codes (`AccessControlEntryRecord` minus its id)."""

    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int


@dataclass(frozen=True, slots=True)
class AclsImage:
    """ACLs by their Uuid text id."""

    acls: FrozenMap[str, StandardAcl]

    EMPTY: ClassVar[AclsImage]

    def records(self) -> list[MetadataRecord]:
        """One `AccessControlEntryRecord` per ACL, by id."""
        out: list[MetadataRecord] = []
        for acl_id in sorted(self.acls):
            a = self.acls[acl_id]
            data: dict[str, Any] = {"id": acl_id, "resourceType": a.resource_type,
                    "resourceName": a.resource_name, "patternType": a.pattern_type,
                    "principal": a.principal, "host": a.host, "operation": a.operation,
                    "permissionType": a.permission_type}
            out.append(MetadataRecord("ACCESS_CONTROL_ENTRY_RECORD", 0, data))
        return out


# ------------------------------------------------------------------------------ producer ids


@dataclass(frozen=True, slots=True)
class ProducerIdsImage:
    """The next producer id the controller will hand out (-1: never set)."""

    next_producer_id: int = -1
    broker_id: int = -1
    broker_epoch: int = -1

    EMPTY: ClassVar[ProducerIdsImage]

    def records(self) -> list[MetadataRecord]:
        """The single `ProducerIdsRecord`, if one was ever written."""
        if self.next_producer_id < 0:
            return []
        data = {"brokerId": self.broker_id, "brokerEpoch": self.broker_epoch,
                "nextProducerId": self.next_producer_id}
        return [MetadataRecord("PRODUCER_IDS_RECORD", 0, data)]


# ------------------------------------------------------------------------- delegation tokens


@dataclass(frozen=True, slots=True)
class DelegationTokenData:
    """A delegation token's metadata (the HMAC is never in the log, nor here)."""

    token_id: str
    owner: str
    requester: str
    renewers: tuple[str, ...]
    issue_timestamp: int
    max_timestamp: int
    expiration_timestamp: int


@dataclass(frozen=True, slots=True)
class DelegationTokensImage:
    """Delegation tokens by token id."""

    tokens: FrozenMap[str, DelegationTokenData]

    EMPTY: ClassVar[DelegationTokensImage]

    def records(self) -> list[MetadataRecord]:
        """One `DelegationTokenRecord` per token."""
        out: list[MetadataRecord] = []
        for token_id in sorted(self.tokens):
            t = self.tokens[token_id]
            data: dict[str, Any] = {
                "owner": t.owner, "requester": t.requester, "renewers": list(t.renewers),
                "issueTimestamp": t.issue_timestamp, "maxTimestamp": t.max_timestamp,
                "expirationTimestamp": t.expiration_timestamp, "tokenId": t.token_id,
            }
            out.append(MetadataRecord("DELEGATION_TOKEN_RECORD", 0, data))
        return out


ConfigsImage.EMPTY = ConfigsImage(FrozenMap())
ClientQuotasImage.EMPTY = ClientQuotasImage(FrozenMap())
ScramImage.EMPTY = ScramImage(FrozenMap())
AclsImage.EMPTY = AclsImage(FrozenMap())
ProducerIdsImage.EMPTY = ProducerIdsImage()
DelegationTokensImage.EMPTY = DelegationTokensImage(FrozenMap())
