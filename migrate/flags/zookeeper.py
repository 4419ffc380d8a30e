"""Build `zkreader.ConnectOptions` from the CLI's ZooKeeper flags, once for every command.

`read_snapshot` is the one bulk read of the tree through them, with a progress bar.

Flags are checked here, before any connection is attempted, so a typo is an exit 2 naming the
flag rather than a 15-second wait for an exit 3. Secret values (digest and SASL passwords) are
never echoed in an error message.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from migrate._progress import ProgressBars
from migrate.errors import BadFlagError
from zkreader import ClusterSnapshot, ConnectOptions

__all__ = ["connect_options", "read_snapshot"]


def _existing_file(flag: str, value: str | None) -> str | None:
    if value is not None and not Path(value).is_file():
        raise BadFlagError(f"{flag} {value!r}: no such file")
    return value


def connect_options(args: argparse.Namespace) -> ConnectOptions:
    """Return the `ConnectOptions` the `--zookeeper`/`--zk-*` flags describe.

    Args:
        args: parsed flags of any command that called `cli.args.add_zookeeper`.

    Raises:
        BadFlagError: a flag is malformed or contradicts another; the message names it.
        BadConnectStringError: `--zookeeper` is not Kafka's `host[:port][,...][/chroot]` form
            (raised by `ConnectOptions`, which parses it once for the whole run; exit 2).
    """
    digest = args.zk_digest or None
    if digest is not None and (":" not in digest or digest.startswith(":")):
        raise BadFlagError("--zk-digest: expected USER:PASSWORD (value not shown)")
    if args.zk_sasl_username and not args.zk_sasl:
        raise BadFlagError("--zk-sasl-username needs --zk-sasl")
    if args.zk_sasl and args.zk_sasl_mechanism.upper() == "DIGEST-MD5":
        if not args.zk_sasl_username or not args.zk_sasl_password:
            raise BadFlagError(
                "--zk-sasl with DIGEST-MD5 needs --zk-sasl-username and --zk-sasl-password "
                "(or ZK2KRAFT_ZK_SASL_PASSWORD)"
            )
    tls_files = {
        "--zk-tls-ca": args.zk_tls_ca,
        "--zk-tls-cert": args.zk_tls_cert,
        "--zk-tls-key": args.zk_tls_key,
    }
    if not args.zk_tls:
        for flag, value in tls_files.items():
            if value is not None:
                raise BadFlagError(f"{flag} needs --zk-tls")
        if args.zk_tls_no_verify:
            raise BadFlagError("--zk-tls-no-verify needs --zk-tls")
    if (args.zk_tls_cert is None) != (args.zk_tls_key is None):
        raise BadFlagError("--zk-tls-cert and --zk-tls-key go together")
    for flag, value in tls_files.items():
        _existing_file(flag, value)
    return ConnectOptions(
        connect=args.zookeeper,
        timeout_s=float(args.zk_timeout),
        digest=digest,
        sasl=bool(args.zk_sasl),
        sasl_mechanism=args.zk_sasl_mechanism,
        sasl_username=args.zk_sasl_username,
        sasl_password=args.zk_sasl_password if args.zk_sasl else None,
        tls=bool(args.zk_tls),
        tls_ca=args.zk_tls_ca,
        tls_cert=args.zk_tls_cert,
        tls_key=args.zk_tls_key,
        tls_verify=not args.zk_tls_no_verify,
    )


def read_snapshot(options: ConnectOptions, bars: ProgressBars) -> ClusterSnapshot:
    """Open a session, read the whole tree with a progress callback, and close the session.

    The one bulk read of `snapshot`, `plan`, `verify` and `migrate --cutover none`: none of them
    keeps a change feed, so no watch is armed (the online migration reads through its own
    session, which does).

    Raises:
        ZkUnreachableError: no session within `options.timeout_s` (exit 3).
        ZnodeFormatError: a znode is malformed (exit 2, names the path).
    """
    from writers import ReadPause
    from zkreader import open_session, read_cluster

    with open_session(options) as session:
        return read_cluster(session, progress=bars.task("reading ZooKeeper"), watch=False,
                            pause=ReadPause.from_env())
