"""The flags the CLI and the runs share: voters, stand-in, ZooKeeper, client, offline."""
