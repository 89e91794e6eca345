"""The MCP server: sgwatch's watch, wait and actions as tools for coding agents."""
