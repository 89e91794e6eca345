"""Bytes from a host: the Transport protocol, SSH (asyncssh) and local implementations."""
