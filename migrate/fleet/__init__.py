"""`zk2kraft plan --fleet FILE`: plan many clusters in one Spark job (see `command`)."""
