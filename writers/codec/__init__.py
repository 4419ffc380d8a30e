"""Kafka's record formats: schemas, the generated codec, records, batches, varints, RPC schema.

`encode_request` and `decode_response` are public for the one client outside `writers`:
`plan --bootstrap-server`'s ApiVersions probe (`migrate.preflight.broker_release`).
"""

from writers.codec.protocol import decode_response, encode_request

__all__ = ["decode_response", "encode_request"]
