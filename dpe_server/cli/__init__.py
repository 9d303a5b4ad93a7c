"""The `dpe-server` command (`command`: serve, read, check)."""
