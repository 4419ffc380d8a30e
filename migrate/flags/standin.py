"""`--standin`, `--controller`, `--quorum-voters`, `--controller-config`: the stand-in flags.

The stand-in transport of the online migration (docs/design/standin.md): zk2kraft
takes one voter id of the controllers' static quorum, listens on that voter's address, keeps its log
in a local `metadata.log.dir`, and leads the running controllers through Kafka's Raft RPCs
(`writers.StandInLeader`). The operator says who is who either with one `--controller` per real
controller or with the `controller.quorum.voters` string the controllers are configured with
(`--quorum-voters`, which must name the stand-in with the same address). The controller listener's
security comes from `--controller-config FILE` in Kafka's own property names, the ones the
controllers' listener uses:

* `security.protocol` PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL;
* SSL: `ssl.keystore.location` (a PEM file holding the certificate chain and the key, valid for
  the stand-in's host; used on both sides), `ssl.key.password`, `ssl.truststore.location` (PEM
  CA certificates), `ssl.client.auth=required` (controllers must show certificates);
* SASL: `sasl.mechanism=PLAIN` and `sasl.jaas.config` with PlainLoginModule's `username`/
  `password` (the stand-in's login to the others) and `user_NAME="..."` entries (the logins it
  accepts), as the listener's JAAS line holds them;
* the controllers' timing, when it is not Kafka's default: `controller.quorum.fetch.timeout.ms`
  (2000; the stand-in's check-quorum gate is 1.5 x this, as Kafka's leader's) and
  `broker.session.timeout.ms` (9000; after it the stand-in fences a silent broker). The
  controllers' own properties file holds both under these names.

Everything here is exit 2 naming the flag, before anything connects. Secrets are never printed.
"""

from __future__ import annotations

import argparse
import re
import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from migrate.errors import BadFlagError
from migrate.flags.client_config import read_properties
from migrate.flags.voters import parse_voter

__all__ = ["StandInSpec", "check_standin_flags", "parse_controller", "parse_host_port",
           "parse_standin", "quorum_voter_ids"]

_ENDPOINT = re.compile(r"^(\d+)@(\[[^\]]+\]|[^:@\s]+):(\d+)$")
_HOST_PORT = re.compile(r"^(\[[^\]]+\]|[^:@\s,\[\]]+):(\d+)$")


def _port(flag: str, value: str, port: int) -> int:
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{flag} {value!r}: port must be 1..65535")
    return port


def _endpoint(flag: str, value: str) -> tuple[int, str, int]:
    m = _ENDPOINT.match(value.strip())
    if m is None:
        raise argparse.ArgumentTypeError(
            f"{flag} {value!r}: expected ID@HOST:PORT (a controller's node id and its "
            "controller listener's address, as in controller.quorum.voters)")
    node_id, host, port = int(m.group(1)), m.group(2).strip("[]"), int(m.group(3))
    if not 0 <= node_id <= 2**31 - 1:
        raise argparse.ArgumentTypeError(f"{flag} {value!r}: node id must be 0..2147483647")
    return node_id, host, _port(flag, value, port)


def parse_host_port(flag: str, value: str) -> tuple[str, int]:
    """`HOST:PORT` (`[IPv6]:PORT` too), as a broker's `bootstrap.servers` entry.

    Raises:
        argparse.ArgumentTypeError: not HOST:PORT, or the port is not 1..65535.
    """
    m = _HOST_PORT.match(value.strip())
    if m is None:
        raise argparse.ArgumentTypeError(f"{flag} {value!r}: expected HOST:PORT")
    return m.group(1).strip("[]"), _port(flag, value, int(m.group(2)))


def parse_standin(value: str) -> tuple[int, str, int, Path]:
    """The argparse type of `--standin ID@HOST:PORT=DIR`."""
    endpoint, sep, directory = value.partition("=")
    if not sep or not directory:
        raise argparse.ArgumentTypeError(
            f"--standin {value!r}: expected ID@HOST:PORT=DIR (the voter id zk2kraft takes, the "
            "address it listens on for the controllers, and its local metadata.log.dir)")
    node_id, host, port = _endpoint("--standin", endpoint)
    parse_voter(f"{node_id}={directory}")
    return node_id, host, port, Path(directory)


def parse_controller(value: str) -> tuple[int, str, int]:
    """The argparse type of `--controller ID@HOST:PORT`."""
    return _endpoint("--controller", value)


@dataclass(frozen=True)
class StandInSpec:
    """Who the stand-in is and whom it leads (checked flags).

    Attributes:
        node_id / listen / log_dir: the stand-in's voter id, listener address and log dir.
        voters: every voter id -> (host, port), the stand-in's own included.
        protocol: the controller listener's security protocol (for the report).
        fetch_timeout_ms: the controllers' `controller.quorum.fetch.timeout.ms`.
        broker_session_timeout_ms: the controllers' `broker.session.timeout.ms`.
    """

    node_id: int
    listen: tuple[str, int]
    log_dir: Path
    voters: Mapping[int, tuple[str, int]]
    protocol: str = "PLAINTEXT"
    tls_server: ssl.SSLContext | None = field(default=None, repr=False)
    tls_client: ssl.SSLContext | None = field(default=None, repr=False)
    sasl_users: Mapping[str, str] | None = field(default=None, repr=False)
    sasl_client: tuple[str, str] | None = field(default=None, repr=False)
    fetch_timeout_ms: int = 2000
    broker_session_timeout_ms: int = 9000

    def to_json(self) -> dict[str, object]:
        """The report's `transport` entry (no secrets)."""
        return {"kind": "standin", "node_id": self.node_id,
                "listen": f"{self.listen[0]}:{self.listen[1]}", "log_dir": str(self.log_dir),
                "voters": {str(n): f"{h}:{p}" for n, (h, p) in sorted(self.voters.items())},
                "security_protocol": self.protocol}


def _quorum_voters(value: str) -> list[tuple[int, str, int]]:
    out = []
    for part in value.split(","):
        if not part.strip():
            continue
        try:
            out.append(_endpoint("--quorum-voters", part))
        except argparse.ArgumentTypeError as exc:
            raise BadFlagError(str(exc)) from None
    if not out:
        raise BadFlagError("--quorum-voters: empty; expected ID@HOST:PORT,ID@HOST:PORT,...")
    return out


def quorum_voter_ids(value: str) -> list[int]:
    """The ids of a `controller.quorum.voters` string (exit 2 on a malformed one)."""
    return [n for n, _, _ in _quorum_voters(value)]


def check_standin_flags(
    standin: tuple[int, str, int, Path] | None,
    controllers: Sequence[tuple[int, str, int]] | None,
    quorum_voters: str | None,
    controller_config: str | None,
    *,
    voters_given: bool,
    cutover: str | None,
) -> StandInSpec | None:
    """Check the stand-in flags together (None when the stand-in transport is not asked for).

    `plan` passes `cutover=None`: it plans an online migration and has no `--cutover`.

    Raises:
        BadFlagError: a rule is broken (exit 2, naming the flag).
    """
    if standin is None:
        for flag, given in (("--controller", controllers), ("--quorum-voters", quorum_voters),
                            ("--controller-config", controller_config)):
            if given:
                raise BadFlagError(f"{flag} belongs to the stand-in transport: give --standin "
                                   "ID@HOST:PORT=DIR too (or drop it and use --voter ID=DIR)")
        return None
    node_id, host, port, directory = standin
    if voters_given:
        raise BadFlagError(
            "--standin and --voter are two transports and exclusive: --voter ID=DIR writes "
            "controller log dirs on this host; --standin leads running controllers over the "
            "network (give them with --controller or --quorum-voters)")
    if cutover is not None and cutover == "none":
        raise BadFlagError("--standin needs --cutover now or manual: the stand-in leads running "
                           "controllers through an online migration; --cutover none is an "
                           "offline copy into --voter directories")
    if bool(controllers) == bool(quorum_voters):
        raise BadFlagError("--standin: name the other voters with --controller ID@HOST:PORT "
                           "(repeat) or with --quorum-voters (controller.quorum.voters), one of "
                           "the two")
    voters: dict[int, tuple[str, int]] = {node_id: (host, port)}
    if controllers:
        for cid, chost, cport in controllers:
            if cid in voters:
                raise BadFlagError(f"--controller {cid}@{chost}:{cport}: node id {cid} given "
                                   "twice (or it is the stand-in's own id)")
            voters[cid] = (chost, cport)
    else:
        assert quorum_voters is not None
        listed = _quorum_voters(quorum_voters)
        ids = [n for n, _, _ in listed]
        if len(set(ids)) != len(ids):
            raise BadFlagError(f"--quorum-voters: a node id appears twice in {quorum_voters!r}")
        own = {n: (h, p) for n, h, p in listed}
        if own.get(node_id) != (host, port):
            raise BadFlagError(
                f"--quorum-voters must name the stand-in as {node_id}@{host}:{port} (the "
                "controllers reach it at that address); it holds "
                + (f"{node_id}@{own[node_id][0]}:{own[node_id][1]}" if node_id in own
                   else f"no voter {node_id}"))
        voters = own
    if len(voters) < 2:
        raise BadFlagError("--standin: at least one real controller must follow the stand-in")
    path = directory.expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise BadFlagError(f"--standin ...={directory}: exists and is not a directory")
    spec = StandInSpec(node_id, (host, port), path, voters)
    if controller_config:
        spec = _with_security(spec, controller_config)
    return spec


def _with_security(spec: StandInSpec, path: str) -> StandInSpec:
    props = read_properties(path, flag="--controller-config")
    flag = f"--controller-config {path}"
    protocol = props.get("security.protocol", "PLAINTEXT").upper()
    if protocol not in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"):
        raise BadFlagError(f"{flag}: security.protocol {protocol!r} is not one of PLAINTEXT, "
                           "SSL, SASL_PLAINTEXT, SASL_SSL")
    tls_server = tls_client = None
    if protocol.endswith("SSL"):
        tls_server, tls_client = _tls(props, flag)
    users = client = None
    if protocol.startswith("SASL"):
        users, client = _sasl(props, flag)
    return StandInSpec(spec.node_id, spec.listen, spec.log_dir, spec.voters, protocol,
                       tls_server, tls_client, users, client,
                       _millis(props, "controller.quorum.fetch.timeout.ms", 2000, flag),
                       _millis(props, "broker.session.timeout.ms", 9000, flag))


def _millis(props: Mapping[str, str], key: str, default: int, flag: str) -> int:
    """A positive whole number of milliseconds, Kafka's default when absent (exit 2 else)."""
    value = props.get(key)
    if value is None:
        return default
    if not value.strip().isdigit() or int(value) <= 0:
        raise BadFlagError(f"{flag}: {key}={value!r} is not a positive number of milliseconds")
    return int(value)


def _tls(props: Mapping[str, str], flag: str) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    for key in ("ssl.keystore.type", "ssl.truststore.type"):
        if props.get(key, "PEM").upper() != "PEM":
            raise BadFlagError(f"{flag}: {key}={props[key]}: the stand-in reads PEM stores "
                               "only (convert with openssl or keytool -exportcert)")
    keystore = props.get("ssl.keystore.location")
    truststore = props.get("ssl.truststore.location")
    if not keystore or not truststore:
        raise BadFlagError(f"{flag}: an SSL controller listener needs ssl.keystore.location "
                           "(PEM certificate chain + key) and ssl.truststore.location (PEM CAs)")
    password = props.get("ssl.key.password")
    try:
        server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=truststore)
        server.load_cert_chain(keystore, password=password)
        if props.get("ssl.client.auth", "none").lower() == "required":
            server.verify_mode = ssl.CERT_REQUIRED
        client = ssl.create_default_context(cafile=truststore)
        client.load_cert_chain(keystore, password=password)
        if props.get("ssl.endpoint.identification.algorithm", "https") == "":
            client.check_hostname = False
    except (OSError, ssl.SSLError) as exc:
        raise BadFlagError(f"{flag}: cannot load the PEM stores ({type(exc).__name__}: "
                           f"{getattr(exc, 'strerror', None) or exc.args[-1]})") from None
    return server, client


def _sasl(props: Mapping[str, str], flag: str) -> tuple[dict[str, str], tuple[str, str]]:
    mechanism = props.get("sasl.mechanism", props.get("sasl.mechanism.controller.protocol",
                                                      "GSSAPI")).upper()
    if mechanism != "PLAIN":
        raise BadFlagError(f"{flag}: sasl.mechanism {mechanism}: the stand-in speaks SASL/PLAIN "
                           "only (SCRAM, GSSAPI and OAUTHBEARER are not implemented)")
    jaas = props.get("sasl.jaas.config", "")
    fields = dict(re.findall(r'(\w+)\s*=\s*"([^"]*)"', jaas))
    if "username" not in fields or "password" not in fields:
        raise BadFlagError(f"{flag}: sasl.jaas.config needs PlainLoginModule's username=\"...\" "
                           "password=\"...\" (the stand-in's login to the other controllers)")
    users = {k[5:]: v for k, v in fields.items() if k.startswith("user_")}
    if not users:
        users = {fields["username"]: fields["password"]}
    return users, (fields["username"], fields["password"])
