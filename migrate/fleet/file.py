"""`plan --fleet FILE`: read the fleet file, one cluster a line, into checked `FleetCluster`s.

The format: `NAME CONNECT [FLAG ...]`, whitespace separated (shell-style quotes allowed for a
path holding spaces), `#` starts a comment. The flags are `plan`'s own per-cluster flags, parsed
by the very argument groups `plan` registers (`cli.args.add_zookeeper`, `add_metadata_version`,
`add_offline`) and checked by the same functions (`connect_options`,
`resolve_metadata_version`), so a flag means here what it means to `plan --zookeeper`.

Secrets never sit in the file: `--zk-digest`, `--zk-sasl-password` and
`--password-encoder-secret` are refused (exit 2 naming the line, never echoing the value); each
has an `-env VAR` twin naming the environment variable that holds it, read here, on the driver,
so a variable that is not set is an exit 2 naming the line before anything connects. TLS settings
are PEM file paths (`--zk-tls-key` is an unencrypted PEM: no password travels), checked to exist.

Every problem is a `BadFlagError` (exit 2) that starts with `FILE:LINE:`; nothing connects
before the whole file has been read and checked.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from migrate.errors import BadFlagError, MigrateError
from writers import MetadataVersion
from zkreader import ConnectOptions
from zkreader.errors import BadConnectStringError

__all__ = ["FleetCluster", "read_fleet_file"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

# inline-secret flag -> the flag naming the environment variable that holds the secret
SECRET_FLAGS: dict[str, str] = {
    "--zk-digest": "--zk-digest-env",
    "--zk-sasl-password": "--zk-sasl-password-env",
    "--password-encoder-secret": "--password-encoder-secret-env",
}


@dataclass(frozen=True, slots=True)
class FleetCluster:
    """One line of the fleet file, checked: what a Spark task needs to plan that cluster.

    Attributes:
        name: the cluster's name (unique in the file).
        line: the line number it came from (for messages).
        connect: the options of its ZooKeeper session (secrets resolved from the environment).
        metadata_version: `--metadata-version`, resolved as `plan` resolves it.
        offline: `--offline`.
        target_kafka: `--target-kafka`.
        password_encoder_secret: from `--password-encoder-secret-env VAR` (never logged).
    """

    name: str
    line: int
    connect: ConnectOptions
    metadata_version: MetadataVersion
    offline: bool = False
    target_kafka: str = "3.9"
    password_encoder_secret: str | None = field(default=None, repr=False)


class _LineParser(argparse.ArgumentParser):
    """argparse whose errors become a `BadFlagError` for the line being parsed."""

    where = ""

    def error(self, message: str) -> NoReturn:
        raise BadFlagError(f"{self.where}: {message}")


def _line_parser(zk_timeout: float) -> _LineParser:
    from migrate.cli.args import add_metadata_version, add_offline, add_zookeeper

    p = _LineParser(prog="fleet line", add_help=False, allow_abbrev=False)
    add_zookeeper(p)
    add_metadata_version(p)
    add_offline(p, target=True)
    for flag in SECRET_FLAGS.values():
        p.add_argument(flag, metavar="VAR", default=None)
    # the global ZK2KRAFT_ZK_* variables are one cluster's; each line names its own, if any
    p.set_defaults(zk_digest=None, zk_sasl_password=None, zk_timeout=zk_timeout)
    return p


def _env(where: str, flag: str, var: str | None) -> str | None:
    if var is None:
        return None
    value = os.environ.get(var)
    if not value:
        raise BadFlagError(f"{where}: {flag} {var}: that environment variable is not set")
    return value


def _cluster(where: str, line_no: int, tokens: list[str], parser: _LineParser) -> FleetCluster:
    from migrate.flags.offline import resolve_metadata_version
    from migrate.flags.zookeeper import connect_options

    if len(tokens) < 2:
        raise BadFlagError(f"{where}: expected NAME CONNECT [FLAG ...], got {len(tokens)} field(s)")
    name, connect, flags = tokens[0], tokens[1], tokens[2:]
    if not _NAME.match(name):
        raise BadFlagError(f"{where}: cluster name {name!r}: letters, digits, '.', '_', '-'")
    if connect.startswith("-"):
        raise BadFlagError(f"{where}: {name}: the second field is the ZooKeeper connect string, "
                           f"got the flag {connect!r}")
    for token in flags:
        inline = token.split("=", 1)[0]
        if inline in SECRET_FLAGS:  # the value is not shown: it is a secret
            raise BadFlagError(
                f"{where}: {name}: {inline} puts a secret in the fleet file; name the "
                f"environment variable holding it with {SECRET_FLAGS[inline]} VAR instead")
        if inline in ("--zookeeper", "--voter", "--standin", "--controller", "--quorum-voters",
                      "--json", "--html", "--fleet", "--spark-master"):
            raise BadFlagError(f"{where}: {name}: {inline} is not a per-cluster flag of "
                               "`plan --fleet`")
    parser.where = f"{where}: {name}"
    args = parser.parse_args(["--zookeeper", connect, *flags])
    args.zk_digest = _env(parser.where, "--zk-digest-env", args.zk_digest_env)
    args.zk_sasl_password = _env(parser.where, "--zk-sasl-password-env",
                                 args.zk_sasl_password_env)
    secret = _env(parser.where, "--password-encoder-secret-env", args.password_encoder_secret_env)
    try:
        options = connect_options(args)
        mv = resolve_metadata_version(args.metadata_version, offline=args.offline,
                                      target_kafka=args.target_kafka)
    except (MigrateError, BadConnectStringError) as exc:
        raise BadFlagError(f"{parser.where}: {exc}") from None
    return FleetCluster(name, line_no, options, mv, offline=args.offline,
                        target_kafka=args.target_kafka, password_encoder_secret=secret)


def read_fleet_file(path: str, *, zk_timeout: float = 15.0) -> list[FleetCluster]:
    """Read and check the whole fleet file.

    Args:
        path: the file `--fleet` names.
        zk_timeout: each cluster's `--zk-timeout` unless its line gives one (plan's
            `--zk-timeout`): the bound on one task's wait for a session.

    Raises:
        BadFlagError: the file cannot be read, holds no cluster, a line is malformed, puts a
            secret inline, names an unset variable, or a name repeats (exit 2, `FILE:LINE:`).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadFlagError(f"--fleet {path}: cannot read it: {exc}") from None
    parser = _line_parser(zk_timeout)
    clusters: list[FleetCluster] = []
    seen: dict[str, int] = {}
    for line_no, line in enumerate(text.splitlines(), start=1):
        where = f"{path}:{line_no}"
        try:
            tokens = shlex.split(line, comments=True)
        except ValueError as exc:  # an unclosed quote
            raise BadFlagError(f"{where}: {exc}") from None
        if not tokens:
            continue
        cluster = _cluster(where, line_no, tokens, parser)
        if cluster.name in seen:
            raise BadFlagError(f"{where}: cluster name {cluster.name!r} repeats line "
                               f"{seen[cluster.name]}")
        seen[cluster.name] = line_no
        clusters.append(cluster)
    if not clusters:
        raise BadFlagError(f"--fleet {path}: no cluster in it "
                           "(one a line: NAME CONNECT [FLAG ...])")
    return clusters
