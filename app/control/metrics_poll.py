"""/metrics as a second throughput source: scraped every 2 s while the server serves.
Also the server's own start-up figures, from that page or from /server_info.

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
    """Forever (cancel it): scrape while the watched run serves and has /metrics; once
    it is up, ask its own start-up figures (/server_info) if nothing gave them yet."""
    # The server whose /server_info was read, and the state it went into (a long log's
    # state is replaced once its past is read: asked again then).
    asked: tuple[int, object] | None = None
    while True:
        await asyncio.sleep(every)
        server = ctl.session.server
        if server is None or watch.state.state not in _SERVING:
            continue
        ask = asked != (server.pid, watch.state) and not watch.state.startup_from_api
        if not (ask or _wanted(watch)):
            continue
        import httpx  # here: only a server that is up needs it

        from sgwatch.control.server_http import MetricsOff, NotReady

        try:
            async with ctl.server_api() as api:
                if ask:
                    _startup(watch, ctl.engine.startup_from_info(await api.server_info()))
                    asked = (server.pid, watch.state)
                if _wanted(watch):
                    await _scrape(api, ctl, watch, server.pid, every)
        except (httpx.HTTPError, MetricsOff, MetricsError, NotReady, TransportError, ValueError):
            pass  # the log goes on as the source; tried again next period
        if watch.metrics is not None:
            watch.feed_metrics(None, time.time())


async def _scrape(api: ServerApi, ctl: Controller, watch: Watch, pid: int, every: float) -> None:
    """Scrapes into the Watch until the server (a restart) or its flags change."""
    pages: deque[tuple[float, MetricsPage]] = deque(maxlen=int(LATENCY_S / every) + 1)
    read, between = ctl.engine.read_metrics, ctl.engine.metrics_between
    while _wanted(watch) and ctl.session.server is not None and ctl.session.server.pid == pid:
        text = await api.metrics_text()
        page = read(text)
        if not watch.state.startup_from_api:
            _startup(watch, ctl.engine.startup_from_metrics(text))
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


def _startup(watch: Watch, report: ev.ServerStartup | None) -> None:
    """The server's own start-up total, once: it does not change while the server runs."""
    if report is not None and report.seconds is not None:
        watch.feed_server_startup(report)


def _wanted(watch: Watch) -> bool:
    s = watch.state
    engine = of_log(s.engine)  # the engine that wrote the log
    return engine.metrics_served(s.args) and s.state in _SERVING
