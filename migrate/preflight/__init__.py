"""The pre-flight: findings, and what in a snapshot blocks or endangers a migration."""
