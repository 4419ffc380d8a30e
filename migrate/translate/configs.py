"""`ConfigRecord`s for topic and broker configs (`/config/topics/*`, `/config/brokers/*`).

One record per key, keys in sorted order (the znode's JSON order is not significant, I6).
Broker configs of the cluster-wide default entity (`/config/brokers/<default>`) get the resource
name `""`, KRaft's name for it. PASSWORD-type dynamic broker configs are stored encrypted with
`password.encoder.secret`; they are decoded with the secret given, and when there is none, or it
does not decode them, the config is left out and a blocker names it: copying the ciphertext
(what Kafka 3.4 did, KAFKA-14801) would hand brokers a "password" that is really ciphertext.
"""

from __future__ import annotations

from collections.abc import Mapping

from migrate.preflight.findings import Finding
from migrate.translate.password import PasswordDecodeError, decode_password, is_password_config
from writers import BROKER_RESOURCE, MetadataRecord
from zkreader import ConfigZnode

__all__ = [
    "DEFAULT_ENTITY",
    "broker_config_records",
    "broker_resource_name",
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
