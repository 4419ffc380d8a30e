"""Report data: plain dataclasses with `to_json()`, and the redaction policy (design I7).

Reports hold data only; `verify._render` (rich) and `verify._html` turn them into text. Every
path to text goes through `RedactionPolicy`, strict by default (Kafka's
`MetadataNodeRedactionCriteria`): SCRAM credentials, token data and sensitive configs are
replaced by a marker. Parity rows never carry raw secrets in the first place (SCRAM is held as
a one-way digest, broker passwords as present/absent), so even `DISABLED` cannot print one.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, cast

from writers import REDACTED, is_sensitive_config

if TYPE_CHECKING:
    from verify._window import WindowParts

__all__ = [
    "CHANGED_BY_KAFKA",
    "CHANGED_TITLE",
    "DIFFERENCE",
    "NOT_CHECKED",
    "NOT_CHECKED_TITLE",
    "REDACTED",
    "Difference",
    "FindingLike",
    "JsonValue",
    "ParityReport",
    "format_value",
    "RedactionPolicy",
    "Report",
    "is_sensitive_config",
]

JsonValue = int | float | str | bool | None | list["JsonValue"] | dict[str, "JsonValue"]

ABSENT = "(absent)"

# What a compared field is (`Difference.verdict`): only DIFFERENCE fails parity.
DIFFERENCE = "difference"
CHANGED_BY_KAFKA = "changed_by_kafka"
"""Kafka's own legitimate change since the migration (dual-write): a producer-id block a KRaft
controller allocated, a registration a broker made itself that ZooKeeper no longer lists."""
NOT_CHECKED = "not_checked"
"""Not judged: the tool cannot know the value it should be (e.g. the voter set, without
`--quorum-voters`)."""
CHANGED_TITLE = "changed by Kafka since the migration (not differences)"
NOT_CHECKED_TITLE = "not checked (not differences)"


def format_value(value: JsonValue) -> str:
    """A compact, human form of one compared value: lists as `[1, 2]`, None as `(absent)`."""
    if value is None:
        return ABSENT
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {format_value(v)}" for k, v in value.items()) + "}"
    return str(value)


class RedactionPolicy(enum.Enum):
    """How much of a secret-derived value a report may show.

    STRICT (default) shows only `<redacted>`; NORMAL shows an 8-hex-digit prefix of a SCRAM
    digest (enough to tell two credentials apart); DISABLED shows the full digest. None of
    them can show a raw credential, password or token: those never reach a report.
    """

    STRICT = "strict"
    NORMAL = "normal"
    DISABLED = "disabled"

    def show(self, value: JsonValue, *, secret: bool) -> JsonValue:
        """The value as this policy lets it be printed."""
        if not secret or value is None:
            return value
        if self is RedactionPolicy.STRICT or not isinstance(value, str):
            return REDACTED
        if self is RedactionPolicy.NORMAL:
            return value[:15] + "…" if value.startswith("sha256:") else REDACTED
        return value


@dataclass(frozen=True, slots=True)
class Difference:
    """One field on which ZooKeeper and the quorum disagree.

    Attributes:
        kind: entity kind: broker, topic, partition, topic_config, broker_config,
            client_quota, scram, acl, producer_ids, delegation_token, voter, transaction.
        key: the entity, e.g. `orders-3`, `1`, `user=alice`.
        field: the field (Kafka's camelCase name, a config key) or `<exists>` when the whole
            entity is on one side only.
        zookeeper: the value ZooKeeper implies (None: absent).
        quorum: the value the voters' log holds (None: absent).
        secret: the values derive from a secret; they are shown only through a policy.
        verdict: DIFFERENCE (fails parity), CHANGED_BY_KAFKA or NOT_CHECKED (reported, do not
            fail it).
        reason: why it is not a difference (or what a difference means), for the operator.
    """

    kind: str
    key: str
    field: str
    zookeeper: JsonValue
    quorum: JsonValue
    secret: bool = False
    verdict: str = DIFFERENCE
    reason: str = ""

    def to_json(
        self, policy: RedactionPolicy = RedactionPolicy.STRICT
    ) -> dict[str, JsonValue]:
        """`{"kind","key","field","zookeeper","quorum"}` (and `"reason"` when there is one)
        with secrets shown per `policy`."""
        out: dict[str, JsonValue] = {
            "kind": self.kind,
            "key": self.key,
            "field": self.field,
            "zookeeper": policy.show(self.zookeeper, secret=self.secret),
            "quorum": policy.show(self.quorum, secret=self.secret),
        }
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True, slots=True)
class ParityReport:
    """The result of comparing ZooKeeper with the quorum (the `verify --json` document).

    Attributes:
        differences: in stable order (kind, then key in natural order, then field).
        checked: entities compared per kind (union of both sides).
        provenance: where the quorum image came from (offset, epoch, voters, ...), not secret.
        changed_by_kafka: Kafka's own legitimate changes since the migration (not differences).
        not_checked: what could not be judged, each with what would let it be.
    """

    differences: tuple[Difference, ...]
    checked: Mapping[str, int]
    provenance: Mapping[str, JsonValue] = field(default_factory=dict)
    changed_by_kafka: tuple[Difference, ...] = ()
    not_checked: tuple[Difference, ...] = ()

    @classmethod
    def of(cls, findings: Sequence[Difference], checked: Mapping[str, int],
           provenance: Mapping[str, JsonValue] | None = None) -> ParityReport:
        """A report sorting `findings` by verdict (each keeps its order within its class)."""
        return cls(tuple(d for d in findings if d.verdict == DIFFERENCE), checked,
                   dict(provenance or {}),
                   tuple(d for d in findings if d.verdict == CHANGED_BY_KAFKA),
                   tuple(d for d in findings if d.verdict == NOT_CHECKED))

    @property
    def parity(self) -> bool:
        """True when nothing differs (Kafka's own changes and what was not checked aside)."""
        return not self.differences

    def to_json(self, policy: RedactionPolicy = RedactionPolicy.STRICT) -> dict[str, JsonValue]:
        """`{"parity": bool, "differences": [...], "changed_by_kafka": [...], "not_checked":
        [...], "checked": {...}}` (design contract)."""
        out: dict[str, JsonValue] = {
            "parity": self.parity,
            "differences": [d.to_json(policy) for d in self.differences],
            "changed_by_kafka": [d.to_json(policy) for d in self.changed_by_kafka],
            "not_checked": [d.to_json(policy) for d in self.not_checked],
            "checked": dict(self.checked),
        }
        if self.provenance:
            out["provenance"] = dict(self.provenance)
        return out


class FindingLike(Protocol):
    """A pre-flight finding (`migrate`'s `Finding(code, message, path)` fits)."""

    @property
    def code(self) -> str: ...

    @property
    def message(self) -> str: ...

    @property
    def path(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Report:
    """A whole report page: what `plan --html` attaches to a change ticket.

    Attributes:
        title: page title, e.g. "zk2kraft plan".
        summary: label → value lines (brokers, topics, partitions, ...).
        blockers / warnings: pre-flight findings.
        records: records by type that `migrate` would write.
        parity: the diff against voters that already hold a log, if any.
        window: the cutover window's parts (`migrate --html`), drawn as a stacked bar.
        texts: (title, plain text) sections shown as preformatted text, e.g. the operator's
            sequence of `plan --standin` (property lines an operator copies).
    """

    title: str
    summary: Mapping[str, JsonValue] = field(default_factory=dict)
    blockers: Sequence[FindingLike] = ()
    warnings: Sequence[FindingLike] = ()
    records: Mapping[str, int] = field(default_factory=dict)
    parity: ParityReport | None = None
    window: WindowParts | None = None
    texts: Sequence[tuple[str, str]] = ()

    def to_json(self, policy: RedactionPolicy = RedactionPolicy.STRICT) -> dict[str, JsonValue]:
        """The report as JSON-ready data (findings as `{"code","message","path"}`)."""
        return {
            "title": self.title,
            "summary": dict(self.summary),
            "blockers": [_finding(f) for f in self.blockers],
            "warnings": [_finding(f) for f in self.warnings],
            "records": dict(self.records),
            "parity": None if self.parity is None else self.parity.to_json(policy),
            **({} if self.window is None
               else {"window_parts": cast("JsonValue", self.window.to_json())}),
        }


def _finding(f: FindingLike) -> dict[str, JsonValue]:
    return {"code": f.code, "message": f.message, "path": f.path}
