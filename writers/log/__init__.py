"""Log directories on disk: segments, staging, the reader, locks, file utilities, quorum writer."""
