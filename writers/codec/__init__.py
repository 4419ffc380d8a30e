"""Kafka's record formats: schemas, the generated codec, records, batches, varints, RPC schema."""
