"""A small HTTP/1.1 server on asyncio streams: what the endpoints need, no more.

Requests with a Content-Length body, keep-alive, and responses that are either
a whole body or a stream sent with chunked transfer encoding (server-sent
events). Each response logs one uvicorn-style access line when it starts, as
uvicorn does, so a streaming request's line comes before its tokens.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from urllib.parse import urlsplit

MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 16 * 1024 * 1024
IDLE_TIMEOUT_S = 75.0


@dataclass(slots=True)
class Request:
    method: str
    target: str
    path: str
    headers: dict[str, str]
    body: bytes
    client: str  # "host:port", as the access line shows it

    def json(self) -> dict:
        doc = json.loads(self.body or b"{}")
        if not isinstance(doc, dict):
            raise ValueError("the body must be a JSON object")
        return doc


@dataclass(slots=True)
class Response:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    stream: AsyncIterator[bytes] | None = None
    headers: dict[str, str] = field(default_factory=dict)


def json_response(doc: object, status: int = 200) -> Response:
    return Response(status, json.dumps(doc).encode())


Handler = Callable[[Request], Awaitable[Response]]


class HttpServer:
    def __init__(self, handler: Handler, access_log: Callable[[str], None]) -> None:
        self._handler = handler
        self._access = access_log
        self._server: asyncio.Server | None = None
        self._clients: set[asyncio.StreamWriter] = set()
        self.streaming = 0  # responses still being streamed

    async def start(self, host: str, port: int, sock: socket.socket | None = None) -> None:
        """Serve on host:port, or on `sock`, a socket the server bound and listened on
        earlier (vLLM holds its port from start-up; connections wait in its backlog)."""
        if sock is not None:
            self._server = await asyncio.start_server(self._serve, sock=sock)
            return
        self._server = await asyncio.start_server(self._serve, host, port, reuse_address=True)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._clients):
            writer.close()
        if self._server is not None:
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._clients.add(writer)
        peer = writer.get_extra_info("peername") or ("unknown", 0)
        client = f"{peer[0]}:{peer[1]}"
        try:
            while True:
                request = await self._read(reader, client)
                if request is None:
                    break
                if isinstance(request, Response):  # malformed: answer and hang up
                    await self._respond(writer, None, request, keep_alive=False)
                    break
                keep_alive = request.headers.get("connection", "").lower() != "close"
                response = await self._handler(request)
                await self._respond(writer, request, response, keep_alive)
                if not keep_alive:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            pass
        finally:
            self._clients.discard(writer)
            writer.close()

    async def _read(self, reader: asyncio.StreamReader, client: str) -> Request | Response | None:
        try:
            async with asyncio.timeout(IDLE_TIMEOUT_S):
                head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as e:
            return None if not e.partial.strip() else Response(400, b"")
        except asyncio.LimitOverrunError:
            return Response(431, b"")
        if len(head) > MAX_HEADER_BYTES:
            return Response(431, b"")
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            return Response(400, b"")
        method, target, _version = parts
        headers = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        if "chunked" in headers.get("transfer-encoding", "").lower():
            return Response(411, b"")
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError:
            return Response(400, b"")
        if length < 0 or length > MAX_BODY_BYTES:
            return Response(413, b"")
        body = await reader.readexactly(length) if length else b""
        path = urlsplit(target).path or "/"
        return Request(method, target, path, headers, body, client)

    async def _respond(
        self,
        writer: asyncio.StreamWriter,
        request: Request | None,
        response: Response,
        keep_alive: bool,
    ) -> None:
        status = HTTPStatus(response.status)
        if request is not None:
            self._access(
                f'{request.client} - "{request.method} {request.target} HTTP/1.1" '
                f"{status.value} {status.phrase}"
            )
        head = [
            f"HTTP/1.1 {status.value} {status.phrase}",
            "server: uvicorn",
            f"content-type: {response.content_type}",
            *(f"{k}: {v}" for k, v in response.headers.items()),
        ]
        if not keep_alive:
            head.append("connection: close")
        if response.stream is None:
            head.append(f"content-length: {len(response.body)}")
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + response.body)
            await writer.drain()
            return
        head.append("transfer-encoding: chunked")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        self.streaming += 1
        try:
            async for chunk in response.stream:
                writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                await writer.drain()
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        finally:
            self.streaming -= 1
