"""A fleet: many servers at once, from a Prometheus query API or a group of SSH hosts.

One row per server (row.py); the dashboard's fleet table, `sgwatch fleet` and the
MCP server's `fleet` tool all read the same rows.
"""
