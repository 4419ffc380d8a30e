"""The error codes the stand-in answers with: Kafka's `org.apache.kafka.common.protocol.Errors`
(facts, one table for `writers._standin` and `writers._standin_brokers`)."""

from __future__ import annotations

NONE = 0
NOT_LEADER_OR_FOLLOWER = 6
REQUEST_TIMED_OUT = 7
UNSUPPORTED_SASL_MECHANISM = 33
UNSUPPORTED_VERSION = 35
NOT_CONTROLLER = 41
SASL_AUTHENTICATION_FAILED = 58
FENCED_LEADER_EPOCH = 74
UNKNOWN_LEADER_EPOCH = 75
STALE_BROKER_EPOCH = 77
DUPLICATE_BROKER_REGISTRATION = 101
BROKER_ID_NOT_REGISTERED = 102
INCONSISTENT_CLUSTER_ID = 104
INVALID_REGISTRATION = 119
