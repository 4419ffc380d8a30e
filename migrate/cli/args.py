"""The argument groups several commands share, the parser class and the types they use.

Each `migrate/cli/<name>.py` registers its own subparser (`add_parser`) from these pieces, so a
flag such as `--zookeeper` or `--voter` is spelled, typed and explained once for every command.
The flags' values are checked further in `migrate.flags` (`zookeeper`, `voters`, `standin`).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from typing import Any, TypeAlias

from migrate.cli.exit_codes import EXIT_BAD_INPUT
from migrate.flags.standin import parse_controller, parse_standin
from migrate.flags.voters import parse_voter

__all__ = ["SUB_EPILOG", "Parser", "Subparsers", "add_metadata_version", "add_offline",
           "add_output", "add_standin", "add_voters", "add_zookeeper", "positive_float"]

SUB_EPILOG = """\
exit codes, secrets and which path fits which cluster: zk2kraft --help
"""


_DASH_VALUE = re.compile(r"^-\d+[=@]")  # `-1=DIR`, `-1@HOST:PORT=DIR`: values, never options


class Parser(argparse.ArgumentParser):
    """argparse that exits 2 with the flag named (argparse's own default is also 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"zk2kraft: error: {message}\n")
        raise SystemExit(EXIT_BAD_INPUT)

    def _parse_optional(self, arg_string: str) -> Any:
        # `-1=DIR` is a value (a --voter with a negative id), not an unknown option: argparse
        # would say "expected one argument"; as a value, --voter's own check names the id
        if _DASH_VALUE.match(arg_string):
            return None
        return super()._parse_optional(arg_string)


# what `cli.build_parser` passes each command's `add_parser`
Subparsers: TypeAlias = "argparse._SubParsersAction[Parser]"


def positive_float(value: str) -> float:
    try:
        result = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not math.isfinite(result):  # nan compares false with everything; inf never times out
        raise argparse.ArgumentTypeError(f"{value!r} must be a finite number of seconds")
    if result <= 0:
        raise argparse.ArgumentTypeError(f"{value!r} must be > 0")
    return result


def add_zookeeper(p: argparse.ArgumentParser, *, required: bool = True) -> None:
    g = p.add_argument_group("ZooKeeper connection")
    g.add_argument(
        "--zookeeper",
        required=required,  # plan takes --fleet FILE instead, and checks that one is given
        metavar="CONNECT",
        help="Kafka's zookeeper.connect: host:port[,host:port...][/chroot]",
    )
    g.add_argument(
        "--zk-timeout",
        type=positive_float,
        default=15.0,
        metavar="SECONDS",
        help="give up with exit 3 if no session within this time (default 15)",
    )
    g.add_argument(
        "--zk-digest",
        metavar="USER:PASSWORD",
        default=os.environ.get("ZK2KRAFT_ZK_DIGEST"),
        help="digest auth (or env ZK2KRAFT_ZK_DIGEST)",
    )
    g.add_argument("--zk-sasl", action="store_true", help="authenticate with SASL")
    g.add_argument("--zk-sasl-mechanism", default="DIGEST-MD5", help="SASL mechanism")
    g.add_argument("--zk-sasl-username", metavar="USER")
    g.add_argument(
        "--zk-sasl-password",
        metavar="PASSWORD",
        default=os.environ.get("ZK2KRAFT_ZK_SASL_PASSWORD"),
        help="(or env ZK2KRAFT_ZK_SASL_PASSWORD)",
    )
    g.add_argument("--zk-tls", action="store_true", help="connect to ZooKeeper's secure port")
    g.add_argument("--zk-tls-ca", metavar="PEM",
                   help="with --zk-tls: CA certificate(s) that signed ZooKeeper's (default: "
                   "the system's trust store)")
    g.add_argument("--zk-tls-cert", metavar="PEM",
                   help="with --zk-tls: this client's certificate, when ZooKeeper wants one "
                   "(ssl.clientAuth)")
    g.add_argument("--zk-tls-key", metavar="PEM",
                   help="with --zk-tls: the private key of --zk-tls-cert (unencrypted PEM)")
    g.add_argument("--zk-tls-no-verify", action="store_true", help="skip hostname verification")


def add_voters(p: argparse.ArgumentParser, *, required: bool) -> None:
    p.add_argument(
        "--voter",
        dest="voters",
        action="append",
        type=parse_voter,
        required=required,
        default=None,
        metavar="ID=DIR",
        help="a KRaft controller's node id and its metadata.log.dir (repeat for each voter)",
    )


def add_standin(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "stand-in transport (instead of --voter; --cutover now|manual)",
        "zk2kraft takes one voter id of the controllers' static quorum and leads the running "
        "controllers (started with zookeeper.metadata.migration.enable=true and a long "
        "controller.quorum.election.timeout.ms, e.g. 30000, so that it wins the first "
        "election): they replicate the pre-copy, the mirror and the drain onto their own disks, "
        "and at cutover it resigns (EndQuorumEpoch) so that a warm controller leads. Use it "
        "when the controllers' disks are not on this host; use --voter ID=DIR when they are. "
        "Example: --standin 3000@10.0.0.5:9093=/var/lib/zk2kraft/meta "
        "--controller 3001@c1:9093 --controller 3002@c2:9093")
    g.add_argument("--standin", type=parse_standin, metavar="ID@HOST:PORT=DIR",
                   help="the voter id zk2kraft takes, the address it listens on (its entry in "
                   "controller.quorum.voters) and its local metadata.log.dir")
    g.add_argument("--controller", dest="controllers", action="append", type=parse_controller,
                   metavar="ID@HOST:PORT",
                   help="a running controller that follows the stand-in (repeat for each)")
    g.add_argument("--quorum-voters", metavar="ID@HOST:PORT,...",
                   help="instead of --controller: the controllers' controller.quorum.voters "
                   "string (it must name the stand-in with the --standin address)")
    g.add_argument("--controller-config", metavar="FILE",
                   help="the controller listener's security in Kafka's property names: "
                   "security.protocol (SSL, SASL_PLAINTEXT, SASL_SSL), ssl.keystore.location / "
                   "ssl.truststore.location (PEM), ssl.key.password, ssl.client.auth, "
                   "sasl.mechanism=PLAIN, sasl.jaas.config (username/password, user_NAME)")


def add_output(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", metavar="FILE", help="also write the result as JSON (mode 0600)")
    p.add_argument("--quiet", action="store_true", help="no progress bars or tables")


def _metadata_version(value: str) -> object:
    """The argparse type of `--metadata-version`: the one place the flag is parsed.

    Every command then passes the parsed `MetadataVersion` on (plan, migrate, the translator,
    Spark tasks). Imported lazily so `--help` stays fast.
    """
    from migrate.errors import BadFlagError
    from migrate.translate.framing import parse_target_version

    try:
        return parse_target_version(value)
    except BadFlagError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--metadata-version ")) from None


def add_metadata_version(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--metadata-version",
        type=_metadata_version,
        default=None,
        metavar="V",
        help="KRaft metadata.version to write: 3.4-IV0 ... 3.9-IV0 (default 3.9-IV0); with "
        "--offline --target-kafka 4.N also the 4.x levels up to that release's highest (4.0-IV3, "
        "4.1-IV1, 4.2-IV1, 4.3-IV0, 4.4-IV2), which is the default; 4.0-IV3 runs on every 4.x "
        "and is 4.x's default",
    )


def add_offline(p: argparse.ArgumentParser, *, target: bool, upgrade_after: bool = False) -> None:
    """`--offline`, and with `target` `--target-kafka` (`upgrade_after`: plan's wording, where
    a 4.N line without --offline prints the online path and Kafka's upgrade after it)."""
    g = p.add_argument_group("offline migration (every broker stopped)")
    g.add_argument(
        "--offline",
        action="store_true",
        help="every broker is stopped and the cluster never goes back to ZooKeeper: refuse "
        "if a broker is still registered or /controller is held; read once, touch nothing in "
        "ZooKeeper; the log is final (ZkMigrationState POST_MIGRATION) and holds no broker "
        "registrations (each broker registers itself when it starts in KRaft mode)",
    )
    if target:
        from migrate.translate.framing import TARGETS

        g.add_argument(
            "--target-kafka",
            choices=TARGETS,
            default="3.9",
            help="the Kafka release the KRaft controllers and brokers will run (default 3.9); "
            "4.0 ... 4.4 (ZooKeeper-free Kafka) with --offline write that release's highest "
            "metadata.version (4.0-IV3, 4.1-IV1, 4.2-IV1, 4.3-IV0, 4.4-IV2), straight from "
            "ZooKeeper; 4.x (any 4.x line) writes 4.0-IV3, which every 4.x runs; "
            "--metadata-version picks another"
            + ("; without --offline a 4.N line is the online path to 3.9, then Kafka's rolling "
               "upgrade to 4.N and its kafka-features upgrade, printed as the sequence's last "
               "step" if upgrade_after else "; without --offline only 3.9 (online, the "
               "migration ends on 3.9: plan --target-kafka 4.N prints the upgrade after it)"),
        )
