"""What an online run is given (`OnlineOptions`), already checked by the command, and the
metadata.version check an online cutover needs (`check_cutover_version`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from migrate.bulk.voters import VoterTarget
from migrate.errors import BadFlagError
from migrate.flags.standin import StandInSpec
from writers import MetadataVersion
from zkreader import ConnectOptions

__all__ = ["OnlineOptions", "check_cutover_version"]


def check_cutover_version(mv: MetadataVersion) -> None:
    """`--cutover now|manual` writes a metadata transaction: metadata.version >= 3.6-IV1.

    Raises:
        BadFlagError: an older metadata.version (exit 2, says why).
    """
    if not mv.supports_transactions:
        raise BadFlagError(
            f"--metadata-version {mv.name}: an online cutover keeps the copied records "
            "inside an open metadata transaction (BeginTransactionRecord) until the fence, and "
            "metadata transactions need metadata.version 3.6-IV1 or later; use "
            "--cutover none for an offline copy at this version"
        )


@dataclass(frozen=True, slots=True)
class OnlineOptions:
    """Everything `run_online` needs, already checked by the command.

    Attributes:
        connect: ZooKeeper connection options.
        voters: the `--voter` targets; the first is the id written into `/controller`.
        metadata_version: `--metadata-version` (>= 3.6-IV1).
        password_encoder_secret: the brokers' secret (never logged).
        cutover: "now" or "manual".
        on_cutover: the `--on-cutover` shell command, if any.
        journal_dir: where the journal lives.
        overrides: attribute names of blocker override flags given.
        lag_bound_s: the gate's bound on the mirror's lag.
        lag_wait_s: how long, once the cutover is asked, the gate waits for the mirror to come
            within `lag_bound_s`; past it the cutover goes ahead behind a lagging mirror (the
            drain reads the rest), since under steady changes a slow host may never catch up.
        handoff_timeout_s: how long to wait for a KRaft controller's claim (t2).
        broker_wait_s: with the stand-in and `--cutover now`, how long the gate waits for
            every ZooKeeper broker to be registered with it and fetching (Kafka's
            WAIT_FOR_BROKERS) before the run stops with nothing fenced
            (`migrate.online.broker_gate`).
        fence_without_brokers: the operator's explicit choice to cut over once
            `broker_wait_s` ran out even so, with a warning (the old default).
    """

    connect: ConnectOptions
    voters: tuple[VoterTarget, ...]
    metadata_version: MetadataVersion
    cutover: str
    journal_dir: Path
    password_encoder_secret: str | None = field(default=None, repr=False)
    on_cutover: str | None = None
    overrides: frozenset[str] = frozenset()
    lag_bound_s: float = 1.0
    lag_wait_s: float = 30.0
    handoff_timeout_s: float = 120.0
    broker_wait_s: float = 60.0
    fence_without_brokers: bool = False
    standin: StandInSpec | None = None  # the stand-in transport instead of local voter dirs
