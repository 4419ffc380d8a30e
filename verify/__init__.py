"""verify: replay a metadata log into an image, judge parity with ZooKeeper, render reports.

Public API only; implementation modules are `_`-prefixed.
"""

from verify._expected import expected_image, parse_scram
from verify._html import render_html, write_report_file
from verify._loader import (
    LoadedLog,
    MetadataLoader,
    OpenTransaction,
    Provenance,
    load_log,
    load_records,
)
from verify._parity import KINDS, compare, diff_rows, image_rows, natural_key, parity_report
from verify._private_file import open_private, write_private
from verify._render import render_parity
from verify._render_inspect import (
    InspectSummary,
    inspect_json_lines,
    redact_record_json,
    render_inspect,
)
from verify._render_plan import VoterParity, plan_console, render_plan
from verify._report import (
    Difference,
    FindingLike,
    JsonValue,
    ParityReport,
    RedactionPolicy,
    Report,
    format_value,
    is_sensitive_config,
)
from verify._voters import (
    VoterDiff,
    VoterLogs,
    first_difference,
    log_fingerprint,
    read_voters,
    transaction_differences,
    voter_diffs,
)
from verify.delta import (
    ClusterDelta,
    MetadataDelta,
    TopicDelta,
    TopicsDelta,
    apply_records,
)
from verify.errors import ReplayError, UnknownRecordTypeError, VerifyError
from verify.image import (
    AclsImage,
    BrokerRegistration,
    ClientQuotasImage,
    ClusterImage,
    ConfigsImage,
    DelegationTokensImage,
    FeaturesImage,
    FrozenMap,
    MetadataImage,
    PartitionImage,
    ProducerIdsImage,
    ScramCredential,
    ScramImage,
    StandardAcl,
    TopicImage,
    TopicsImage,
)

__all__ = [
    "VoterDiff",
    "VoterLogs",
    "first_difference",
    "log_fingerprint",
    "read_voters",
    "transaction_differences",
    "voter_diffs",
    "AclsImage",
    "BrokerRegistration",
    "ClientQuotasImage",
    "ClusterDelta",
    "ClusterImage",
    "ConfigsImage",
    "DelegationTokensImage",
    "FeaturesImage",
    "PartitionImage",
    "ProducerIdsImage",
    "ScramCredential",
    "ScramImage",
    "StandardAcl",
    "TopicDelta",
    "TopicImage",
    "TopicsDelta",
    "TopicsImage",
    "apply_records",
    "InspectSummary",
    "inspect_json_lines",
    "redact_record_json",
    "KINDS",
    "MetadataDelta",
    "MetadataImage",
    "Difference",
    "FindingLike",
    "FrozenMap",
    "JsonValue",
    "LoadedLog",
    "MetadataLoader",
    "OpenTransaction",
    "open_private",
    "ParityReport",
    "Provenance",
    "RedactionPolicy",
    "ReplayError",
    "Report",
    "UnknownRecordTypeError",
    "VerifyError",
    "VoterParity",
    "compare",
    "diff_rows",
    "expected_image",
    "format_value",
    "image_rows",
    "is_sensitive_config",
    "load_log",
    "load_records",
    "natural_key",
    "parity_report",
    "parse_scram",
    "plan_console",
    "render_html",
    "render_parity",
    "render_inspect",
    "render_plan",
    "write_private",
    "write_report_file",
]
