"""samples: the sample-cluster generator, a tool that writes a ZK-mode Kafka cluster's tree into
ZooKeeper (for the demo, the tests and the benchmarks). It is not part of the migration: nothing
in `zkreader`, `writers`, `verify` or `migrate` imports it, and it imports none of them.

Library use::

    from samples import SampleSpec, generate_sample_cluster
    manifest = generate_sample_cluster(client, SampleSpec.everything(topics=50))

The ephemeral `/brokers/ids/<id>` and `/controller` znodes belong to `client`'s session: keep the
client open while they should exist.

Command line: `python3 -m samples --zookeeper HOST:PORT/CHROOT ...` (`samples.cli`).

Modules: `cli` (the command line), `_cluster` (sends the writes), `_spec` (the recipe and the
manifest), `_plan` (the writes in dependency order), `_values` (seeded ids, credentials, znode
JSON).
"""

from samples._cluster import SampleCase, SampleManifest, SampleSpec, generate_sample_cluster

__all__ = ["SampleCase", "SampleManifest", "SampleSpec", "generate_sample_cluster"]
