"""The simulated SGLang server: its flags, start-up, log lines per release family,
HTTP endpoints, /metrics page and the ways it dies."""
