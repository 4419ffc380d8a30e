"""`ConfigRecord`s for topic and broker configs (`/config/topics/*`, `/config/brokers/*`).

One record per key, keys in sorted order (the znode's JSON order is not significant, I6).
Broker configs of the cluster-wide default entity (`/config/brokers/<default>`) get the resource
name `""`, KRaft's name for it. PASSWORD-type dynamic broker configs are stored encrypted with
`password.encoder.secret`; they are decoded with the secret given, and when there is none, or it
does not decode them, the config is left out and a blocker names it: copying the ciphertext
(what Kafka 3.4 did, KAFKA-14801) would hand brokers a "password" that is really ciphertext.

`config_diff` is every config kind's delta (topic configs' too); the module ends with the
`broker_config` kind's registry entry (`migrate.translate.kinds`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping

from migrate.preflight.findings import Finding
from migrate.translate.kind import EntityContext, EntityDelta, EntityKind
from migrate.translate.password import PasswordDecodeError, decode_password, is_password_config
from verify import MetadataImage
from writers import BROKER_RESOURCE, MetadataRecord
from zkreader import ZK_KINDS, ClusterSnapshot, ConfigZnode, EntityKey

__all__ = [
    "BROKER_CONFIG_KIND",
    "DEFAULT_ENTITY",
    "broker_config_records",
    "broker_resource_name",
    "config_diff",
    "config_records",
]

DEFAULT_ENTITY = "<default>"  # ZooKeeperInternals.DEFAULT_STRING


def config_records(
    resource_type: int, resource_name: str, config: Mapping[str, str]
) -> list[MetadataRecord]:
    """Return one `ConfigRecord` per key of `config`, sorted by key.

    Args:
        resource_type: Kafka's `ConfigResource.Type` code (2 topic, 4 broker).
        resource_name: topic name, broker id, or "" for the cluster default.
        config: key -> value, already decoded.
    """
    return [
        MetadataRecord(
            "CONFIG_RECORD",
            0,
            {
                "resourceType": resource_type,
                "resourceName": resource_name,
                "name": key,
                "value": config[key],
            },
        )
        for key in sorted(config)
    ]


def broker_resource_name(entity_path: str) -> str:
    """Map `brokers/<id>` / `brokers/<default>` to KRaft's resource name (`<id>` / `""`)."""
    name = entity_path.split("/", 1)[1] if "/" in entity_path else entity_path
    return "" if name == DEFAULT_ENTITY else name


def broker_config_records(
    znode: ConfigZnode, password_encoder_secret: str | None
) -> tuple[list[MetadataRecord], list[Finding]]:
    """Return the `ConfigRecord`s of one broker config entity, and any blockers it raises.

    Args:
        znode: `/config/brokers/<id>` or `/config/brokers/<default>`.
        password_encoder_secret: the brokers' `password.encoder.secret`, or None.

    Returns:
        (records, blockers): a PASSWORD-type config that cannot be decoded is not among the
        records, and a `BROKER_PASSWORD_NO_SECRET` / `BROKER_PASSWORD_UNDECODABLE` blocker names
        it (by key only, never by value).
    """
    path = f"/config/{znode.entity_path}"
    decoded: dict[str, str] = {}
    blockers: list[Finding] = []
    for key in sorted(znode.config):
        value = znode.config[key]
        if not is_password_config(key):
            decoded[key] = value
            continue
        if password_encoder_secret is None:
            blockers.append(
                Finding(
                    "BROKER_PASSWORD_NO_SECRET",
                    f"broker config {key!r} is an encrypted password and no "
                    "--password-encoder-secret was given: it cannot be migrated in clear, "
                    "and its ciphertext is never copied.",
                    path,
                )
            )
            continue
        try:
            decoded[key] = decode_password(value, password_encoder_secret)
        except PasswordDecodeError as exc:
            blockers.append(
                Finding(
                    "BROKER_PASSWORD_UNDECODABLE",
                    f"broker config {key!r} could not be decoded with the given "
                    f"--password-encoder-secret: {exc}.",
                    path,
                )
            )
    records = config_records(BROKER_RESOURCE, broker_resource_name(znode.entity_path), decoded)
    return records, blockers


def config_diff(resource_type: int, resource_name: str, wanted: Mapping[str, str],
                image: MetadataImage, *, keep: Iterable[str] = ()) -> list[MetadataRecord]:
    """ConfigRecords turning the image's keys of one resource into `wanted`, sorted by key.

    Keys in `keep` are left as the log holds them (a value that could not be decoded).
    """
    held: Mapping[str, str] = image.configs.resources.get((resource_type, resource_name), {})
    kept = set(keep)
    out = []
    for key in sorted(set(wanted) | set(held)):
        if key in kept:
            continue
        value = wanted.get(key)
        if value == held.get(key):
            continue
        out.append(MetadataRecord("CONFIG_RECORD", 0, {
            "resourceType": resource_type, "resourceName": resource_name, "name": key,
            "value": value,
        }))
    return out


# ------------------------------------------------------------------ the broker_config kind


def _broker_config_from_nothing(key: EntityKey, snapshot: ClusterSnapshot,
                                ctx: EntityContext) -> EntityDelta:
    out = EntityDelta()
    znode = snapshot.broker_configs.get(key.name)
    if znode is not None:
        out.records, out.blockers = broker_config_records(znode, ctx.secret)
    return out


def _diff_broker_config(key: EntityKey, image: MetadataImage, snap: ClusterSnapshot,
                        ctx: EntityContext) -> EntityDelta:
    znode = snap.broker_configs.get(key.name)
    resource = broker_resource_name(f"brokers/{key.name}")
    if znode is None:
        return EntityDelta(config_diff(BROKER_RESOURCE, resource, {}, image))
    records, blockers = broker_config_records(znode, ctx.secret)
    wanted = {str(r.data["name"]): str(r.data["value"]) for r in records}
    undecoded = set(znode.config) - set(wanted)
    return EntityDelta(config_diff(BROKER_RESOURCE, resource, wanted, image, keep=undecoded),
                       blockers)


def _broker_entity_order(entity: str) -> tuple[int, int, str]:
    """`<default>` first, then numeric broker ids in numeric order, then anything else."""
    if entity == DEFAULT_ENTITY:
        return (0, 0, "")
    if entity.isdigit():
        return (1, int(entity), "")
    return (2, 0, entity)


def _broker_config_keys(snapshot: ClusterSnapshot) -> Iterator[EntityKey]:
    for entity in sorted(snapshot.broker_configs, key=_broker_entity_order):
        yield EntityKey("broker_config", entity)


def _broker_config_image_keys(image: MetadataImage,
                              named: Collection[EntityKey]) -> Iterator[EntityKey]:
    for rtype, rname in sorted(image.configs.resources):
        if rtype == BROKER_RESOURCE:
            yield EntityKey("broker_config", rname or DEFAULT_ENTITY)


BROKER_CONFIG_KIND = EntityKind(
    name="broker_config",
    zk=ZK_KINDS["broker_config"],
    from_nothing=_broker_config_from_nothing,
    diff=_diff_broker_config,
    snapshot_keys=_broker_config_keys,
    image_keys=_broker_config_image_keys,
    records=frozenset({"CONFIG_RECORD:BROKER"}),
    expected=("configs",),
    parity=("broker_config",),
    snapshot_lines=("config:brokers",),
)
