"""The deltas of the keyed entities: configs, client quotas, SCRAM credentials, ACLs and
delegation tokens."""

from __future__ import annotations

from verify._delta_base import Data, _KeyedDelta
from verify.errors import ReplayError
from verify.image import (
    AclsImage,
    ClientQuotasImage,
    ConfigResource,
    ConfigsImage,
    DelegationTokenData,
    DelegationTokensImage,
    FrozenMap,
    QuotaEntity,
    ScramCredential,
    ScramImage,
    StandardAcl,
)


class ConfigsDelta:
    """Config key changes per resource; a null value deletes the key."""

    def __init__(self, base: ConfigsImage) -> None:
        self._base = base
        self._changes: dict[ConfigResource, dict[str, str | None]] = {}

    def replay(self, data: Data) -> None:
        """Apply a `ConfigRecord`."""
        resource = (int(data["resourceType"]), data["resourceName"])
        self._changes.setdefault(resource, {})[data["name"]] = data.get("value")

    def changed_resources(self) -> frozenset[ConfigResource]:
        """(resourceType, resourceName) of every resource with a key set or deleted here."""
        return frozenset(self._changes)

    def delete_resource(self, resource: ConfigResource) -> None:
        """Delete every key of a resource (the config half of `RemoveTopicRecord`)."""
        base = self._base.resources.get(resource, FrozenMap())
        self._changes[resource] = dict.fromkeys(base)

    def finish_snapshot(self) -> None:
        """Delete every key the snapshot did not mention."""
        for resource, conf in self._base.resources.items():
            changes = self._changes.setdefault(resource, {})
            for key in conf:
                changes.setdefault(key, None)

    def apply(self) -> ConfigsImage:
        """The next configs image; resources left with no keys disappear."""
        if not self._changes:
            return self._base
        resources = self._base.resources.thaw()
        for resource, changes in self._changes.items():
            conf = resources[resource].thaw() if resource in resources else {}
            for key, value in changes.items():
                if value is None:
                    conf.pop(key, None)
                else:
                    conf[key] = value
            if conf:
                resources[resource] = FrozenMap(conf)
            else:
                resources.pop(resource, None)
        return ConfigsImage(FrozenMap(resources))


class ClientQuotasDelta:
    """Quota key changes per entity (`ClientQuotaRecord`; `remove` deletes the key)."""

    def __init__(self, base: ClientQuotasImage) -> None:
        self._base = base
        self._changes: dict[QuotaEntity, dict[str, float | None]] = {}

    def replay(self, data: Data) -> None:
        """Apply a `ClientQuotaRecord`."""
        entity: QuotaEntity = tuple(
            sorted((e["entityType"], e.get("entityName")) for e in data["entity"])
        )
        if not entity:
            raise ReplayError("client quota record names no entity")
        value = None if data.get("remove", False) else float(data["value"])
        self._changes.setdefault(entity, {})[data["key"]] = value

    def changed_entities(self) -> frozenset[QuotaEntity]:
        """Entities with a quota key set or removed here."""
        return frozenset(self._changes)

    def finish_snapshot(self) -> None:
        """Delete every quota the snapshot did not mention."""
        for entity, quotas in self._base.entities.items():
            changes = self._changes.setdefault(entity, {})
            for key in quotas:
                changes.setdefault(key, None)

    def apply(self) -> ClientQuotasImage:
        """The next quotas image; entities left with no quotas disappear."""
        entities = self._base.entities.thaw()
        for entity, changes in self._changes.items():
            quotas = entities[entity].thaw() if entity in entities else {}
            for key, value in changes.items():
                if value is None:
                    quotas.pop(key, None)
                else:
                    quotas[key] = value
            if quotas:
                entities[entity] = FrozenMap(quotas)
            else:
                entities.pop(entity, None)
        return ClientQuotasImage(FrozenMap(entities))


class ScramDelta(_KeyedDelta):
    """SCRAM credentials by (user, mechanism); removals of unknown ones are allowed (as Kafka)."""

    def __init__(self, base: ScramImage) -> None:
        super().__init__(base.credentials)

    def replay(self, data: Data) -> None:
        """Apply a `UserScramCredentialRecord`."""
        self._changes[(data["name"], int(data["mechanism"]))] = ScramCredential(
            bytes(data["salt"]), bytes(data["storedKey"]), bytes(data["serverKey"]),
            int(data["iterations"]),
        )

    def replay_remove(self, data: Data) -> None:
        """Apply a `RemoveUserScramCredentialRecord`."""
        self._changes[(data["name"], int(data["mechanism"]))] = None

    def apply(self) -> ScramImage:
        """The next SCRAM image."""
        return ScramImage(self.merged())


class AclsDelta(_KeyedDelta):
    """ACLs by id; removing an id found neither in the image nor the delta raises."""

    def __init__(self, base: AclsImage) -> None:
        super().__init__(base.acls)

    def replay(self, data: Data) -> None:
        """Apply an `AccessControlEntryRecord`."""
        self._changes[data["id"]] = StandardAcl(
            int(data["resourceType"]), data["resourceName"], int(data["patternType"]),
            data["principal"], data["host"], int(data["operation"]), int(data["permissionType"]),
        )

    def replay_remove(self, data: Data) -> None:
        """Apply a `RemoveAccessControlEntryRecord`.

        Raises:
            ReplayError: no ACL with that id.
        """
        acl_id = data["id"]
        if acl_id in self._base:
            self._changes[acl_id] = None
        elif self._changes.get(acl_id) is not None:
            del self._changes[acl_id]
        else:
            raise ReplayError(f"no ACL with id {acl_id}")

    def apply(self) -> AclsImage:
        """The next ACLs image."""
        return AclsImage(self.merged())


class DelegationTokensDelta(_KeyedDelta):
    """Delegation tokens by token id."""

    def __init__(self, base: DelegationTokensImage) -> None:
        super().__init__(base.tokens)

    def replay(self, data: Data) -> None:
        """Apply a `DelegationTokenRecord`."""
        self._changes[data["tokenId"]] = DelegationTokenData(
            token_id=data["tokenId"],
            owner=data["owner"],
            requester=data.get("requester") or data["owner"],
            renewers=tuple(data.get("renewers") or ()),
            issue_timestamp=int(data["issueTimestamp"]),
            max_timestamp=int(data["maxTimestamp"]),
            expiration_timestamp=int(data["expirationTimestamp"]),
        )

    def replay_remove(self, data: Data) -> None:
        """Apply a `RemoveDelegationTokenRecord`."""
        self._changes[data["tokenId"]] = None

    def apply(self) -> DelegationTokensImage:
        """The next tokens image."""
        return DelegationTokensImage(self.merged())
