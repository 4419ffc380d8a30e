"""Which Kafka wrote this ZooKeeper tree: the source version, as far as ZooKeeper tells it.

ZooKeeper records no software version. What it does record are formats that Kafka chose by
its software or by its `inter.broker.protocol.version` (IBP), each a bound (Kafka 3.9.1 source
and docs, as docs/commands.md records them):
* a topic znode's `topic_id` (KIP-516) is assigned by a controller at IBP 2.8 or later: every
  migrated topic having one means IBP >= 2.8 (one without is `TOPIC_WITHOUT_ID`, a blocker);
* `/brokers/ids/<id>` is JSON version 5 at IBP >= 2.7-IV0, 4 below (its `features` are empty in
  ZooKeeper mode: `KafkaServer` registers `BrokerFeatures.createEmpty()`, checked in 3.9.1's
  bytecode, so they say nothing about the release);
* `/feature` is version 2 at IBP >= 3.3-IV0 and version 1 below (status 1 from IBP 2.7);
* `/controller` is version 2 (with `kraftControllerEpoch`) from Kafka 3.4 and version 1 before:
  the running controller's own software.
The IBP is at most the software's version, so an IBP bound is a software lower bound too. The
brokers' own release would need their ApiVersions (`plan` connects to no broker) or their
`server.properties`; the findings say which bounds are known.

The path that fits follows from the bounds: offline (`--offline`) takes any source with topic
ids straight to 3.9 or any 4.x; online needs brokers in migration mode, which Kafka allows from
3.4 and zk2kraft needs at IBP 3.6 or later (metadata transactions, 3.6-IV1). The rule the
issue-29 rehearsal found: brokers older than 3.0 may have left partition directories without
`partition.metadata`, which Kafka 4.x renames away as stray; `prepare-broker` writes them, so
`plan` warns ahead with `BROKER_LOGS_MAY_LACK_TOPIC_IDS` wherever such a broker cannot be ruled
out.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from migrate.preflight.broker_release import (
    BrokerRelease,
    Release,
    release_range,
    release_text,
)
from migrate.preflight.findings import Finding
from migrate.preflight.znodes import migrated_topics
from writers import METADATA_VERSIONS, MetadataVersion
from zkreader import ClusterSnapshot

__all__ = ["BROKER_LOGS_MAY_LACK_TOPIC_IDS", "BROKER_OLDER_THAN_METADATA_VERSION",
           "SourceVersion", "brokers_below_metadata_version", "source_version",
           "source_version_warnings"]

BROKER_LOGS_MAY_LACK_TOPIC_IDS = "BROKER_LOGS_MAY_LACK_TOPIC_IDS"
BROKER_OLDER_THAN_METADATA_VERSION = "BROKER_OLDER_THAN_METADATA_VERSION"

_PARTITION_METADATA_EVERYWHERE: Release = (3, 0)  # the issue-29 rehearsal: 2.8 left dirs without


@dataclass(frozen=True, slots=True)
class SourceVersion:
    """Bounds on the source cluster's Kafka, with the znodes that gave them.

    Attributes:
        ibp_at_least / ibp_below: bounds on the IBP (`below` exclusive), None when unknown.
        software_at_least / software_below: bounds on the brokers' release, likewise.
        evidence: one phrase per znode that set a bound, e.g. "/feature version 2: IBP >= 3.3",
            and one per broker asked (`plan --bootstrap-server`).
        brokers: the brokers' ApiVersions answers, when asked.
    """

    ibp_at_least: Release | None = None
    ibp_below: Release | None = None
    software_at_least: Release | None = None
    software_below: Release | None = None
    evidence: tuple[str, ...] = ()
    brokers: tuple[BrokerRelease, ...] = ()

    def describe(self) -> str:
        """One line, e.g. "Kafka 3.4 or later, inter.broker.protocol.version 3.3 or later"."""
        return (f"Kafka {release_range(self.software_at_least, self.software_below)}, "
                f"inter.broker.protocol.version {release_range(self.ibp_at_least, self.ibp_below)}")

    @property
    def may_predate_3_0(self) -> bool:
        """True unless ZooKeeper proves every broker runs 3.0 or later."""
        return self.software_at_least is None or self.software_at_least < (
            _PARTITION_METADATA_EVERYWHERE)

    @property
    def online_possible(self) -> bool:
        """True when ZooKeeper proves the IBP (so the software) is 3.6 or later."""
        return self.ibp_at_least is not None and self.ibp_at_least >= _ONLINE_MINIMUM

    def paths(self) -> list[str]:
        """The paths that fit, one line each, for `plan`'s output."""
        offline = ("offline (--offline, every broker stopped): straight to Kafka 3.9 or any 4.x "
                   "(--target-kafka 3.9, 4.0 ... 4.4 or 4.x), in one step")
        if self.may_predate_3_0:
            offline += ("; prepare-broker writes the partition.metadata that brokers older "
                        "than 3.0 may have left out")
        if self.online_possible:
            online = ("online (brokers keep serving): to Kafka 3.9, brokers in migration mode at "
                      "their IBP (3.6-IV1 or later); then Kafka's rolling upgrade to 4.x "
                      "(--target-kafka 4.N prints it as the sequence's last step)")
        else:
            online = ("online: first upgrade every broker to Kafka 3.6 or later with "
                      "inter.broker.protocol.version 3.6 or later (a rolling restart; Kafka's "
                      "migration transactions need 3.6-IV1): ZooKeeper does not show that yet")
        return [offline, online]

    def to_json(self) -> dict[str, object]:
        """`plan --json`'s "source" object."""
        def opt(release: Release | None) -> str | None:
            return None if release is None else release_text(release)

        return {"kafka": release_range(self.software_at_least, self.software_below),
                "software_at_least": opt(self.software_at_least),
                "software_below": opt(self.software_below),
                "ibp_at_least": opt(self.ibp_at_least), "ibp_below": opt(self.ibp_below),
                "evidence": list(self.evidence), "paths": self.paths(),
                "brokers": [b.to_json() for b in self.brokers]}


def source_version(snapshot: ClusterSnapshot,
                   brokers: Sequence[BrokerRelease] = ()) -> SourceVersion:
    """Bound the source's IBP and release from what `snapshot` holds (module docstring) and,
    from `plan --bootstrap-server`, the brokers' ApiVersions answers (`broker_release`)."""
    ibp_low: Release | None = None
    ibp_below: Release | None = None
    sw_low: Release | None = None
    sw_below: Release | None = None
    evidence: list[str] = []

    def raise_ibp(to: Release, why: str) -> None:
        nonlocal ibp_low
        if ibp_low is None or to > ibp_low:
            ibp_low = to
            evidence.append(why)

    def cap_ibp(to: Release, why: str) -> None:
        nonlocal ibp_below
        if ibp_below is None or to < ibp_below:
            ibp_below = to
            evidence.append(why)

    topics = list(migrated_topics(snapshot))
    if topics and all(t.topic_id is not None for t in topics):
        raise_ibp((2, 8), "every topic has a topic_id: IBP >= 2.8")
    versions = {b.json_version for b in snapshot.brokers.values()}
    if versions and min(versions) >= 5:
        raise_ibp((2, 7), "/brokers/ids version 5: IBP >= 2.7")
    elif versions and max(versions) < 5:  # mixed versions: an IBP change half rolled out
        cap_ibp((2, 7), f"/brokers/ids version {max(versions)}: IBP < 2.7")
    feature = snapshot.feature
    if feature is not None and feature.json_version >= 2:
        raise_ibp((3, 3), "/feature version 2: IBP >= 3.3")
    elif feature is not None and feature.status == 1:
        cap_ibp((3, 3), "/feature version 1: IBP < 3.3")
    controller = snapshot.controller
    if controller is not None and not controller.is_kraft:
        if controller.json_version >= 2:
            sw_low = (3, 4)
            evidence.append("/controller version 2: the controller runs Kafka >= 3.4")
        else:
            sw_below = (3, 4)
            evidence.append("/controller version 1: the controller runs Kafka < 3.4")
    if ibp_low is not None and ibp_below is not None and ibp_low >= ibp_below:
        evidence.append(f"the upper bound (IBP < {release_text(ibp_below)}) contradicts the lower "
                        "one and is dropped: the znodes were not all written by one IBP")
        ibp_below = None
    if ibp_low is not None and (sw_low is None or ibp_low > sw_low):
        sw_low = ibp_low  # a broker runs at most its own release's IBP
    probed = _probed_bounds(snapshot, brokers, evidence)
    if probed is not None:
        if probed[0] is not None and (sw_low is None or probed[0] > sw_low):
            sw_low = probed[0]
        if probed[1] is not None and (sw_below is None or probed[1] < sw_below):
            sw_below = probed[1]
    if sw_low is not None and sw_below is not None and sw_low >= sw_below:
        evidence.append(f"the upper bound (Kafka < {release_text(sw_below)}) contradicts the lower "
                        "one and is dropped")
        sw_below = None
    return SourceVersion(ibp_low, ibp_below, sw_low, sw_below, tuple(evidence), tuple(brokers))


def _probed_bounds(snapshot: ClusterSnapshot, brokers: Sequence[BrokerRelease],
                   evidence: list[str]) -> tuple[Release | None, Release | None] | None:
    """The cluster's release bounds from every registered broker's answer, or None when any
    registered broker went unasked or unanswered (the others then bound only themselves)."""
    if not brokers:
        return None
    evidence.extend(b.describe() for b in brokers)
    answers = [b for b in brokers if b.error is None and b.broker_id is not None]
    if not snapshot.brokers or {b.broker_id for b in answers} != set(snapshot.brokers):
        evidence.append("not every registered broker answered ApiVersions: the release "
                        "bounds stay ZooKeeper's")
        return None
    lows = [b.at_least for b in answers if b.at_least is not None]
    belows = [b.before for b in answers if b.before is not None]
    # one broker below 2.8 (no lower bound) or on 3.9 (no upper bound) unbounds the cluster
    low = min(lows) if len(lows) == len(answers) else None
    below = max(belows) if len(belows) == len(answers) else None
    return low, below


def source_version_warnings(snapshot: ClusterSnapshot,
                            found: SourceVersion | None = None) -> Iterator[Finding]:
    """`BROKER_LOGS_MAY_LACK_TOPIC_IDS` where the bounds (`found`, else ZooKeeper's) cannot rule
    out a broker before 3.0."""
    if found is None:
        found = source_version(snapshot)
    if not found.may_predate_3_0 or not any(True for _ in migrated_topics(snapshot)):
        return
    yield Finding(
        BROKER_LOGS_MAY_LACK_TOPIC_IDS,
        f"the source is {found.describe()}: brokers older than 3.0 may have left partition "
        "directories without partition.metadata (Kafka 2.8 did), and a KRaft broker renames "
        "such a directory away as stray at its first start (a single-replica partition loses "
        "its data). Offline, the runbook's step \"Prepare each broker's log dirs\" (zk2kraft "
        "prepare-broker --zookeeper ...) writes them from the migrated topic ids before the "
        "first start; its --dry-run lists them.",
        "/feature" if snapshot.feature is not None else "/brokers/topics",
    )


def _release_of(mv: MetadataVersion) -> Release:
    major, minor = mv.release.split(".")
    return int(major), int(minor)


_ONLINE_MINIMUM: Release = min(_release_of(mv) for mv in METADATA_VERSIONS
                               if mv.supports_transactions)
"""The first release whose metadata.version has migration transactions (3.6-IV1): zk2kraft's
online path writes them."""


def line_level(line: Release) -> MetadataVersion | None:
    """The highest metadata.version of a 3.x line (3.6 -> 3.6-IV2), the level its brokers run
    at `inter.broker.protocol.version` = the line; None for a line without a migration level."""
    levels = [mv for mv in METADATA_VERSIONS if _release_of(mv) == line and mv.supports_migration]
    return max(levels, key=lambda mv: mv.level, default=None)


def brokers_below_metadata_version(brokers: Sequence[BrokerRelease],
                                   mv: MetadataVersion) -> Iterator[Finding]:
    """Online: a blocker for every broker whose answered release is older than `mv`'s.

    The online path keeps the brokers running in migration mode with
    `inter.broker.protocol.version` = `mv` (the printed properties), and a broker cannot run an
    IBP above its own release. Brokers of 3.6, 3.7 and 3.8 took the online path at their own
    line's level (docs/matrix.md, 2026-11-29); below 3.6 the cutover's metadata transaction
    (3.6-IV1) rules it out.
    """
    wanted = _release_of(mv)
    for b in brokers:
        if b.before is None or b.before > wanted:
            continue  # unknown, or the broker runs mv's release or later
        line = release_text(b.at_least) if b.at_least is not None else "an older line"
        own = line_level(b.at_least) if b.at_least is not None else None
        if own is not None and own.supports_transactions:  # the cutover's 3.6-IV1
            way = (f"give --metadata-version {own.name} (the brokers' own line's level: brokers "
                   "of 3.6, 3.7 and 3.8 in migration mode take the online path at it), or "
                   "upgrade every broker to Kafka 3.9 first")
        else:
            way = ("upgrade every broker to Kafka 3.6 or later first, with "
                   "inter.broker.protocol.version at that line (the online cutover's metadata "
                   "transaction needs 3.6-IV1), or take the offline path (--offline)")
        yield Finding(
            BROKER_OLDER_THAN_METADATA_VERSION,
            f"{b.describe()}: older than metadata.version {mv.name}, which the online path "
            f"gives the brokers as inter.broker.protocol.version (a broker cannot run an IBP "
            f"above its own release, {line}); {way}",
            f"/brokers/ids/{b.broker_id}" if b.broker_id is not None else "/brokers/ids")
