"""/metrics as a second throughput source: scraped every 2 s while the server serves.

Runs as a dashboard worker per host, only for a server that serves /metrics
(its engine says when: with `--enable-metrics`, or always). Each scrape is
compared with the one before it (rates) and with one about LATENCY_S older
(TTFT and inter-token latency quantiles: a 2 s window rarely holds a finished
request). The result goes into the Watch; the screen's frame only reads it.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import replace
from typing import TYPE_CHECKING

from sgwatch.control.controller import Controller
from sgwatch.core import events as ev
from sgwatch.engines import MetricsError, MetricsPage, of_log
from sgwatch.live.watch import Watch
from sgwatch.transport.errors import TransportError

if TYPE_CHECKING:
    from sgwatch.control.server_http import ServerApi

POLL_S = 2.0
LATENCY_S = 30.0
_SERVING = (ev.READY, ev.SERVING)


async def poll_metrics(ctl: Controller, watch: Watch, every: float = POLL_S) -> None:
    """Forever (cancel it): scrape while the watched run serves and has /metrics."""
    while True:
        await asyncio.sleep(every)
        server = ctl.session.server
        if server is None or not _wanted(watch):
            continue
        import httpx  # here: only a server with /metrics needs it

        from sgwatch.control.server_http import MetricsOff, NotReady

        try:
            async with ctl.server_api() as api:
                await _scrape(api, ctl, watch, server.pid, every)
        except (httpx.HTTPError, MetricsOff, MetricsError, NotReady, TransportError):
            pass  # the log goes on as the source; tried again next period
        if watch.metrics is not None:
            watch.feed_metrics(None, time.time())


async def _scrape(api: ServerApi, ctl: Controller, watch: Watch, pid: int, every: float) -> None:
    """Scrapes into the Watch until the server (a restart) or its flags change."""
    pages: deque[tuple[float, MetricsPage]] = deque(maxlen=int(LATENCY_S / every) + 1)
    read, between = ctl.engine.read_metrics, ctl.engine.metrics_between
    while _wanted(watch) and ctl.session.server is not None and ctl.session.server.pid == pid:
        page = read(await api.metrics_text())
        now = time.monotonic()
        if pages:
            rates = between(pages[-1][1], page, now - pages[-1][0])
            latency = between(pages[0][1], page, now - pages[0][0])
            window = replace(
                rates,
                ttft_p50=latency.ttft_p50,
                ttft_p95=latency.ttft_p95,
                itl_p50=latency.itl_p50,
                itl_p95=latency.itl_p95,
            )
            watch.feed_metrics(window, time.time())
        pages.append((now, page))
        await asyncio.sleep(every)


def _wanted(watch: Watch) -> bool:
    s = watch.state
    engine = of_log(s.engine)  # the engine that wrote the log
    return engine.metrics_served(s.args) and s.state in _SERVING
