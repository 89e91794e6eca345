"""The Prometheus query API (also Thanos, VictoriaMetrics, Mimir): instant queries and
the scrape targets, over async httpx.

    api = PromApi(url, auth=auth, timeout_s=3.0)
    answer = await api.query('sum by (instance) (up)')   # Answer: samples, warnings
    targets = await api.targets()                        # health and last error per target

Every failure is a PromError whose text is one line fit to show (an HTML page, a JSON
of another shape, the API's own error, a refused connection): nothing else escapes.
A request that could not reach the server, or met a 502/503/504, is retried with a
doubling backoff while the time given allows; the API's own verdict is not.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

RETRY_STATUS = frozenset({502, 503, 504})


class PromError(Exception):
    """One line: why the query API gave no usable answer."""


@dataclass(frozen=True, slots=True)
class Sample:
    labels: dict[str, str]
    value: float | None  # None: NaN or infinite (a quantile of no requests, 0/0)


@dataclass(frozen=True, slots=True)
class Answer:
    samples: tuple[Sample, ...]
    warnings: tuple[str, ...] = ()  # the API's own (a partial answer says so here)


@dataclass(frozen=True, slots=True)
class Target:
    labels: dict[str, str]  # the target's labels after relabelling (instance, job, ...)
    health: str  # "up", "down" or "unknown"
    last_error: str


@dataclass(slots=True)
class Traffic:
    """What the client sent and received, for the scale bench and the query-count test."""

    requests: int = 0
    bytes: int = 0
    paths: list[str] = field(default_factory=list)


class PromApi:
    def __init__(
        self,
        base_url: str,
        *,
        auth: httpx.Auth | None = None,
        headers: dict[str, str] | None = None,
        ca_file: str | None = None,
        timeout_s: float = 3.0,
        backoff_s: float = 0.1,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.traffic = Traffic()
        self._timeout_s = timeout_s
        self._backoff_s = backoff_s
        # Verification stays on: a CA bundle adds trust, nothing turns it off.
        self._client = httpx.AsyncClient(
            auth=auth,
            headers=headers,
            verify=ca_file if ca_file else True,
            timeout=timeout_s,
            follow_redirects=False,
        )

    async def query(self, promql: str) -> Answer:
        data, warnings = await self._get("/api/v1/query", {"query": promql})
        if not isinstance(data, dict) or data.get("resultType") not in ("vector", "scalar"):
            raise PromError(f"{self.base_url}: the query's answer is not an instant vector")
        if data["resultType"] == "scalar":
            return Answer((Sample({}, _number(data.get("result"))),), warnings)
        result = data.get("result")
        if not isinstance(result, list):
            raise PromError(f"{self.base_url}: the query's answer has no result list")
        samples = []
        for item in result:
            if not isinstance(item, dict) or not isinstance(item.get("metric"), dict):
                raise PromError(f"{self.base_url}: a result without its labels")
            samples.append(Sample(item["metric"], _number(item.get("value"))))
        return Answer(tuple(samples), warnings)

    async def targets(self) -> list[Target]:
        data, _ = await self._get("/api/v1/targets", {"state": "active"})
        active = data.get("activeTargets") if isinstance(data, dict) else None
        if not isinstance(active, list):
            raise PromError(f"{self.base_url}: the targets' answer has no activeTargets list")
        return [
            Target(t.get("labels") or {}, str(t.get("health", "unknown")), t.get("lastError") or "")
            for t in active
            if isinstance(t, dict)
        ]

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _get(self, path: str, params: dict[str, str]) -> tuple[Any, tuple[str, ...]]:
        """The answer's `data` and warnings; retried while the time given allows."""
        # Half the time given: a last try still has time to answer before the caller's end.
        deadline = time.monotonic() + self._timeout_s / 2
        delay = self._backoff_s
        while True:
            try:
                return await self._get_once(path, params)
            except _Retry as e:
                if time.monotonic() + delay >= deadline:
                    raise PromError(str(e)) from None
            await asyncio.sleep(delay)
            delay *= 2

    async def _get_once(self, path: str, params: dict[str, str]) -> tuple[Any, tuple[str, ...]]:
        url = self.base_url + path
        self.traffic.requests += 1
        self.traffic.paths.append(path)
        try:
            response = await self._client.get(url, params=params)
        except httpx.TimeoutException:
            raise _Retry(f"{self.base_url}: no answer within {self._timeout_s:g} s") from None
        except httpx.HTTPError as e:
            raise _Retry(f"{self.base_url}: {_why(e)}") from None
        self.traffic.bytes += len(response.content)
        if response.status_code in RETRY_STATUS:
            raise _Retry(f"{self.base_url}: HTTP {response.status_code}")
        return _read(self.base_url, response)


class _Retry(Exception):
    """A failure worth another try: the server was not reached, or was busy."""


def _read(base: str, response: httpx.Response) -> tuple[Any, tuple[str, ...]]:
    kind = response.headers.get("content-type", "").split(";")[0].strip() or "no content type"
    try:
        doc = response.json()
    except ValueError:
        return _raise(
            f"{base}: HTTP {response.status_code}, {kind}, not the query API's JSON "
            "(is the URL the API's base?)"
        )
    if not isinstance(doc, dict) or doc.get("status") not in ("success", "error"):
        return _raise(f"{base}: HTTP {response.status_code}, JSON not of the query API's shape")
    if doc["status"] == "error":
        what = " ".join(str(doc.get("error") or "no reason given").split())
        return _raise(f"{base}: {doc.get('errorType') or 'error'}: {what}")
    warnings = doc.get("warnings") or []
    return doc.get("data"), tuple(" ".join(str(w).split()) for w in warnings)


def _raise(message: str) -> Any:
    raise PromError(message)


def _number(value: Any) -> float | None:
    """The value of a [timestamp, "string"] pair; NaN and infinities are None."""
    try:
        number = float(value[1])
    except (TypeError, ValueError, IndexError):
        raise PromError("a sample without a number") from None
    return number if math.isfinite(number) else None


def _why(e: httpx.HTTPError) -> str:
    """One line for a transport error (httpx's text can be empty or span lines)."""
    if isinstance(e, httpx.ConnectError):
        return "cannot connect" + (f" ({_first_line(e)})" if _first_line(e) else "")
    return _first_line(e) or type(e).__name__


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else ""
