"""The server's HTTP API, reached through the transport's port forward.

    port = server_port(server.argv)                # engines/port.py: --port, else the default
    async with open_server(transport, port) as api:
        await api.ensure_ready()                   # NotReady before warmup is done
        text = await api.metrics_text()            # /metrics (--enable-metrics)

The forward ends on the host's loopback, which is where SGLang listens by
default (`--host 127.0.0.1`); a server bound to 0.0.0.0 answers there too.
"""

from __future__ import annotations

import contextlib
import functools
import ssl
from collections.abc import AsyncIterator

import httpx

from sgwatch.transport.base import Transport

TIMEOUT = httpx.Timeout(30.0, connect=10.0)
# /health answers 503 until the warmup request succeeded, and while draining.
HEALTH_TIMEOUT_S = 25.0  # SGLang's /health runs a 1-token generation, up to 20 s


class NotReady(Exception):
    """The server cannot take requests yet (or at all): `str(e)` says why."""


class MetricsOff(Exception):
    """The server was started without --enable-metrics."""


class ServerApi:
    def __init__(self, client: httpx.AsyncClient, label: str) -> None:
        self.client = client
        self.label = label  # "ct129:30000", for messages

    async def ensure_ready(self) -> None:
        try:
            r = await self.client.get("/health", timeout=HEALTH_TIMEOUT_S)
        except httpx.TransportError as e:
            raise NotReady(f"{self.label}: no server answers ({_why(e)})") from None
        if r.status_code == 503:
            raise NotReady(f"{self.label}: the server is not ready yet (warming up or draining)")
        if r.status_code != 200:
            raise NotReady(f"{self.label}: /health answered HTTP {r.status_code}")

    async def metrics_text(self) -> str:
        r = await self.client.get("/metrics")
        if r.status_code == 404:
            raise MetricsOff(f"{self.label}: no /metrics: the server runs without --enable-metrics")
        r.raise_for_status()
        return r.text

    async def model_id(self) -> str | None:
        """The served model name that requests should name (`/v1/models`)."""
        r = await self.client.get("/v1/models")
        if r.status_code != 200:
            return None
        data = r.json().get("data") or [{}]
        return data[0].get("id")

    async def server_info(self) -> dict:
        """`/server_info`; older SGLang has only `/get_server_info` (deprecated since)."""
        for path in ("/server_info", "/get_server_info"):
            r = await self.client.get(path)
            if r.status_code == 200:
                return r.json()
        return {}


@contextlib.asynccontextmanager
async def open_server(transport: Transport, port: int) -> AsyncIterator[ServerApi]:
    local = await transport.forward(port)
    async with api_at(local, f"{transport.label}:{port}") as api:
        yield api


@contextlib.asynccontextmanager
async def api_at(local: int, label: str) -> AsyncIterator[ServerApi]:
    """The API behind a forward already open on local port `local`."""
    # trust_env=False: a proxy from the environment must not carry loopback traffic.
    # No connection cap: the bench's concurrency is the user's choice.
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{local}",
        timeout=TIMEOUT,
        limits=httpx.Limits(max_connections=None),
        trust_env=False,
        verify=_tls(),
    ) as client:
        yield ServerApi(client, label)


@functools.cache
def _tls() -> ssl.SSLContext:
    """httpx's own TLS context, made once. The forward carries plain HTTP, yet each client
    would build one of its own, loading the CA bundle: 0.7 MB of the C library's heap
    and up to 0.2 s of the event loop at every restart, link drop or failed scrape."""
    return httpx.create_ssl_context(trust_env=False)


def _why(e: httpx.TransportError) -> str:
    return str(e) or type(e).__name__
