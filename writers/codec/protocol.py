"""Kafka's request/response wire format for the messages in `writers.codec.rpc_schema`.

A frame is an int32 size, then a header, then the body. Header versions follow Kafka's
`ApiMessageType.requestHeaderVersion/responseHeaderVersion`: a request to a flexible API version
carries header v2 (tagged fields after the int16-length ClientId), otherwise v1; a response to a
flexible version carries header v1 (a tagged-field section after the correlation id), otherwise
v0 — except ApiVersions, whose response header is always v0 so that a client that does not know
the server's versions yet can still read it.

Bodies are encoded and decoded by code generated from the schema table (`writers.codec.codegen`),
the
same generator that writes KRaft records.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from writers.codec.codegen import compile_record
from writers.codec.fields import RecordSpec
from writers.codec.rpc_schema import REQUESTS, RESPONSES, api_name, message_spec
from writers.codec.wire import RecordDecodeError
from writers.errors import SchemaError

__all__ = [
    "API_VERSIONS_KEY",
    "Request",
    "UnsupportedApiError",
    "decode_message",
    "decode_request",
    "decode_response",
    "encode_message",
    "encode_request",
    "encode_response",
    "request_header_version",
    "response_header_version",
]

API_VERSIONS_KEY = 18
_SIZE = struct.Struct(">i")
_KEY_VERSION = struct.Struct(">hh")


class UnsupportedApiError(SchemaError):
    """A request names an api key or version we have no schema for.

    Attributes:
        api_key: the request's api key.
        api_version: its version.
        correlation_id: its correlation id (to answer UNSUPPORTED_VERSION), or None.
    """

    def __init__(self, api_key: int, api_version: int, correlation_id: int | None) -> None:
        super().__init__(f"no schema for {api_name(api_key)} (api key {api_key}) "
                         f"version {api_version}")
        self.api_key = api_key
        self.api_version = api_version
        self.correlation_id = correlation_id


@dataclass(frozen=True, slots=True)
class Request:
    """One decoded request: its header fields and body (Kafka JSON field names)."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body: dict[str, Any]

    @property
    def api(self) -> str:
        """The API's name (`Fetch`, `Vote`)."""
        return api_name(self.api_key)


def _spec(table: Mapping[int, RecordSpec], api_key: int, version: int) -> RecordSpec:
    spec = table.get(api_key)
    if spec is None or version not in spec.valid_versions:
        raise UnsupportedApiError(api_key, version, None)
    return spec


def request_header_version(api_key: int, api_version: int) -> int:
    """2 for a flexible request version, else 1 (Kafka's `requestHeaderVersion`)."""
    return 2 if api_version in _spec(REQUESTS, api_key, api_version).flexible else 1


def response_header_version(api_key: int, api_version: int) -> int:
    """1 for a flexible response version, else 0; ApiVersions always 0."""
    if api_key == API_VERSIONS_KEY:
        return 0
    return 1 if api_version in _spec(RESPONSES, api_key, api_version).flexible else 0


def encode_message(name: str, version: int, data: Mapping[str, Any]) -> bytes:
    """Encode one message body (or header) by its schema name and version.

    Raises:
        SchemaError: unknown message or version, or data that does not fit the schema.
        KeyError: unknown message name.
    """
    spec = message_spec(name)
    if version not in spec.valid_versions:
        raise SchemaError(f"{name} has no version {version} (valid {spec.valid_versions})")
    try:
        return compile_record(spec, version)[0](data)
    except SchemaError:
        raise
    except Exception as exc:  # the generated code failed on a value: say which message
        raise SchemaError(f"{name} v{version}: cannot encode: {exc!r}") from exc


def decode_message(
    name: str, version: int, buf: bytes, start: int = 0, end: int | None = None
) -> tuple[dict[str, Any], int]:
    """Decode one message body (or header) from `buf[start:end]`; returns (data, next pos).

    Raises:
        RecordDecodeError: truncated or malformed input (names the field and byte offset).
    """
    spec = message_spec(name)
    if version not in spec.valid_versions:
        raise SchemaError(f"{name} has no version {version} (valid {spec.valid_versions})")
    return compile_record(spec, version)[1](buf, start, len(buf) if end is None else end)


def _decode_body(spec: RecordSpec, version: int, payload: bytes, pos: int) -> dict[str, Any]:
    """Decode the body after the header; it must fill the rest of the frame exactly."""
    body, end = decode_message(spec.name, version, payload, pos)
    if end != len(payload):
        raise RecordDecodeError(
            f"{spec.name} v{version}: {len(payload) - end} byte(s) left after the body", end)
    return body


def _framed(*parts: bytes) -> bytes:
    size = sum(len(p) for p in parts)
    return b"".join((_SIZE.pack(size), *parts))


def encode_request(
    api_key: int, api_version: int, correlation_id: int, client_id: str | None,
    body: Mapping[str, Any],
) -> bytes:
    """A whole request frame: size, header (v1 or v2), body.

    Raises:
        UnsupportedApiError: no schema for that api key and version.
        SchemaError: the body does not fit.
    """
    spec = _spec(REQUESTS, api_key, api_version)
    header = encode_message("RequestHeader", request_header_version(api_key, api_version), {
        "requestApiKey": api_key, "requestApiVersion": api_version,
        "correlationId": correlation_id, "clientId": client_id,
    })
    return _framed(header, encode_message(spec.name, api_version, body))


def decode_request(payload: bytes) -> Request:
    """Decode a request from the bytes after the size prefix.

    Raises:
        UnsupportedApiError: unknown api key or version (with its correlation id, so the caller
            can answer or close).
        RecordDecodeError: a malformed header or body, or bytes left over.
    """
    if len(payload) < 8:
        raise RecordDecodeError("request shorter than its header", 0)
    api_key, api_version = _KEY_VERSION.unpack_from(payload, 0)
    spec = REQUESTS.get(api_key)
    if spec is None or api_version not in spec.valid_versions:
        raise UnsupportedApiError(api_key, api_version, _SIZE.unpack_from(payload, 4)[0])
    header, pos = decode_message(
        "RequestHeader", request_header_version(api_key, api_version), payload)
    body = _decode_body(spec, api_version, payload, pos)
    return Request(api_key, api_version, header["correlationId"], header.get("clientId"), body)


def encode_response(
    api_key: int, api_version: int, correlation_id: int, body: Mapping[str, Any]
) -> bytes:
    """A whole response frame: size, header (v0, or v1 for a flexible version), body.

    Raises:
        UnsupportedApiError: no schema for that api key and version.
        SchemaError: the body does not fit.
    """
    spec = _spec(RESPONSES, api_key, api_version)
    header = encode_message("ResponseHeader", response_header_version(api_key, api_version),
                            {"correlationId": correlation_id})
    return _framed(header, encode_message(spec.name, api_version, body))


def decode_response(api_key: int, api_version: int, payload: bytes) -> tuple[int, dict[str, Any]]:
    """Decode a response (bytes after the size prefix) to (correlation id, body).

    Raises:
        UnsupportedApiError: no schema for that api key and version.
        RecordDecodeError: malformed, or bytes left over.
    """
    spec = _spec(RESPONSES, api_key, api_version)
    header, pos = decode_message(
        "ResponseHeader", response_header_version(api_key, api_version), payload)
    return header["correlationId"], _decode_body(spec, api_version, payload, pos)

