"""The bulk copy: topic work, the in-process and Spark pipelines, the engine choice."""
