"""The mapping from ZooKeeper's tree to KRaft records: per entity, framing, password decoding."""
