"""`--command-config FILE`: Kafka's Java client properties, turned into librdkafka settings.

Operators already hold a client properties file for `kafka-topics.sh --command-config`; the
canary (`migrate.online.canary`) reads the same file, so it connects the way their tools do. Most
security keys have the same name in librdkafka (`security.protocol`, `sasl.mechanism`,
`ssl.endpoint.identification.algorithm`, `ssl.key.password`, `sasl.kerberos.service.name`).
The rest differ and are mapped here:

* `sasl.jaas.config` holds the PLAIN/SCRAM login as `username="..." password="..."`; librdkafka
  wants `sasl.username` / `sasl.password`. A Kerberos JAAS line maps its `keyTab` and
  `principal` to `sasl.kerberos.keytab` / `sasl.kerberos.principal`.
* `ssl.truststore.location`: librdkafka reads PEM (`ssl.ca.location`), not JKS or PKCS#12
  truststores; a PEM truststore maps, anything else is refused naming the key and the fix.
* `ssl.keystore.location`: a PKCS#12 keystore maps to librdkafka's `ssl.keystore.location`; a
  PEM keystore (key and certificate in one file) to `ssl.certificate.location` and
  `ssl.key.location`; JKS is refused.

Values are never printed: the properties hold passwords.
"""

from __future__ import annotations

import re
from pathlib import Path

from migrate.errors import BadFlagError
from writers import parse_properties

__all__ = ["librdkafka_config", "read_properties"]

_SAME_NAME = frozenset({
    "security.protocol", "sasl.mechanism", "ssl.endpoint.identification.algorithm",
    "ssl.key.password", "sasl.kerberos.service.name", "client.id", "ssl.cipher.suites",
    "socket.connection.setup.timeout.ms", "reconnect.backoff.ms", "reconnect.backoff.max.ms",
    "ssl.keystore.password",
})
"""Java client keys librdkafka takes under the same name and meaning."""

_IGNORED = frozenset({
    "ssl.truststore.type", "ssl.keystore.type", "ssl.truststore.password", "ssl.protocol",
    "ssl.enabled.protocols", "request.timeout.ms", "default.api.timeout.ms",
    "retry.backoff.ms", "retries", "metadata.max.age.ms", "connections.max.idle.ms",
    "sasl.login.class", "sasl.client.callback.handler.class",
})
"""Java-only keys with no librdkafka counterpart that a client file commonly holds: the canary
uses its own timeouts, and the store types are read to decide the mapping."""

_JAAS_OPTION = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"|(\w+)\s*=\s*([^\s;"]+)')


def read_properties(path: str, *, flag: str) -> dict[str, str]:
    """Read a Java properties file (`k=v`, `k: v`, `#`/`!` comments, `\\` continuations).

    Args:
        path: the file.
        flag: the flag that named it (`--command-config`, `--controller-config`), for errors.

    Raises:
        BadFlagError: the file cannot be read (exit 2, names the flag and file).
    """
    try:
        text = Path(path).expanduser().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadFlagError(f"{flag} {path}: cannot read it ({exc})") from None
    return parse_properties(text)


def _jaas(value: str, path: str) -> dict[str, str]:
    options = {}
    for m in _JAAS_OPTION.finditer(value):
        if m.group(1):
            options[m.group(1)] = m.group(2).replace('\\"', '"').replace("\\\\", "\\")
        else:
            options[m.group(3)] = m.group(4)
    if "Krb5LoginModule" in value:
        out = {}
        if "keyTab" in options:
            out["sasl.kerberos.keytab"] = options["keyTab"]
        if "principal" in options:
            out["sasl.kerberos.principal"] = options["principal"]
        return out
    if "username" not in options or "password" not in options:
        raise BadFlagError(f"--command-config {path}: sasl.jaas.config names no username and "
                           "password (PLAIN/SCRAM login modules need both)")
    return {"sasl.username": options["username"], "sasl.password": options["password"]}


def _store_type(props: dict[str, str], key: str, location: str) -> str:
    declared = props.get(key, "").upper()
    if declared:
        return declared
    lowered = location.lower()
    if lowered.endswith((".p12", ".pfx", ".pkcs12")):
        return "PKCS12"
    if lowered.endswith((".pem", ".crt")):
        return "PEM"
    return "JKS"  # Java's default store type


def librdkafka_config(props: dict[str, str], path: str) -> tuple[dict[str, str], list[str]]:
    """Map Java client properties to librdkafka's; returns (config, names of ignored keys).

    Raises:
        BadFlagError: a JKS store (librdkafka cannot read it) or an unusable JAAS line (exit 2).
    """
    config: dict[str, str] = {}
    ignored: list[str] = []
    for key, value in props.items():
        if key in _SAME_NAME:
            config[key] = value
        elif key == "sasl.jaas.config":
            config.update(_jaas(value, path))
        elif key == "ssl.truststore.location":
            kind = _store_type(props, "ssl.truststore.type", value)
            if kind != "PEM":
                raise BadFlagError(
                    f"--command-config {path}: ssl.truststore.location is a {kind} store; the "
                    "canary's client (librdkafka) reads CA certificates as PEM: export them "
                    "(keytool -exportcert -rfc) and set ssl.truststore.type=PEM")
            config["ssl.ca.location"] = value
        elif key == "ssl.keystore.location":
            kind = _store_type(props, "ssl.keystore.type", value)
            if kind == "PKCS12":
                config["ssl.keystore.location"] = value
            elif kind == "PEM":
                config["ssl.certificate.location"] = value
                config["ssl.key.location"] = value
            else:
                raise BadFlagError(
                    f"--command-config {path}: ssl.keystore.location is a {kind} store; the "
                    "canary's client (librdkafka) reads PKCS#12 or PEM: convert it with "
                    "keytool -importkeystore -deststoretype PKCS12")
        elif key in ("ssl.truststore.certificates", "ssl.keystore.certificate.chain",
                     "ssl.keystore.key"):
            raise BadFlagError(f"--command-config {path}: {key} (an inline PEM value) is not "
                               "supported by the canary; point a *.location key at a PEM file")
        else:
            ignored.append(key)
    if "ssl.keystore.location" not in config:
        config.pop("ssl.keystore.password", None)
    return config, sorted(k for k in ignored if k not in _IGNORED)
