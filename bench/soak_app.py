"""The dashboard half of bench/soak.py: `sgwatch HOST...` run as the CLI runs it (its
real terminal driver, in the tmux pane soak.py opens), with two tasks of the bench's
own on its event loop: a sampler and a keyboard.

The sampler writes a JSON line every SOAK_EVERY seconds to SOAK_SAMPLES: RSS, open
file descriptors, threads, asyncio tasks (the bench's two included), Textual's live
DOM nodes (widgets of every screen, app._registry) and gc-tracked objects; with
SOAK_TRACE=N (frames per allocation) also the lines whose allocations grew most since the
first sample after SOAK_WARMUP seconds (tracemalloc: a diagnosis run, slower and heavier,
not for figures), with N > 1 the call paths too, and each snapshot is dumped beside
SOAK_SAMPLES for reading afterwards;
with SOAK_GARBAGE=1 the cyclic garbage a full collection frees, by type (the sampler
collects every minute anyway, for the widgets left outside the DOM).
With SOAK_ARENAS set, a second sampler appends to that file every SOAK_ARENAS_EVERY
seconds (default 5) Python's arenas and the bytes used in them, with wall-clock times
(and with SOAK_TRACE the most bytes traced at once since the last of them: transient
peaks), and the keyboard marks its searches and tab switches there: bench/soak_peaks.py
lines the arenas' rises and the peaks up with what happened just before.
SOAK_STRIP_CACHES=1 puts Textual's own strips back (with their caches: the baseline of
ui/strips.py).
SOAK_MAP_ALONE_FROM=N sets the size from which the C library maps a block alone to N
bytes instead of ui/heap.py's (an experiment on the C heap's free room).
SOAK_SSH_WINDOW=N opens the dashboard's SSH channels with a receive window of N bytes
instead of asyncssh's 2 MiB (how much a channel may buffer while the dashboard is busy).
SOAK_OFF=metrics,liveness,history,writer leaves those steps of the dashboard out (its
/metrics and /server_info reads; its look at the server's process, with discovery
once it is gone; its runs' history records; Textual's output thread, each frame then
written in the event loop's thread): which of them, at a server's event, leaves the C
heap's free room.
SOAK_HEAP_WALK=1 adds to each sample the blocks beside the C heap's holes
(bench/heapwalk.py: by type, and the largest holes with their neighbours).
SOAK_KEYS=0 chooses a host's tab and then presses no key (what the keyboard adds);
SOAK_KEYS_FASTER=N presses them N times as often (does what the keys add level off?).
SOAK_LEAN=1 leaves out of each sample the census (objects by type, the widgets outside
the DOM, the caches' fill, the longest containers and what holds them), which walks the
heap and collects fully: the app then collects as it would alone. Each sample also gives
the collections per generation since the start (`gc_passes`), and the resident memory by
kind of mapping (`resident_kb`: the C heap, anonymous maps, files) and lists the pauses
of the full collections the app made since the last (`full_gc_ms`: its timer's and
Python's own, not the sampler's) and the modules imported since the last
(`modules_new`), the CPU time it used (`cpu_s`), and the C heap's free chunks by size
(`free_chunks`: which holes its free room is made of).
The keyboard presses `l` (layout) every 20 s, timed from the key event to the first
frame showing the new layout (bench/ui_flood.py's key_latencies), a search (`/`, a
term, enter, `n`, escape, end) every 60 s, and the other host's tab every 150 s.

    python bench/soak_app.py HOST... [sgwatch's dashboard options]   (soak.py runs it)
"""

from __future__ import annotations

import asyncio
import collections
import gc
import heapq
import json
import os
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import asyncssh
import heapwalk
from heapstats import LIBC, allocator, free_chunks, resident_kb
from textual import events
from textual.css.query import NoMatches
from textual.widget import Widget
from ui_flood import key_latencies

import sgwatch.ui.app as ui_app
from sgwatch.cli.main import main
from sgwatch.ui import heap, memos, strips

if _WINDOW := int(os.environ.get("SOAK_SSH_WINDOW", "0")):
    _create_process = asyncssh.SSHClientConnection.create_process

    async def _windowed(self, *args, **kwargs):
        return await _create_process(self, *args, window=_WINDOW, **kwargs)

    asyncssh.SSHClientConnection.create_process = _windowed


async def _idle(*args, **kwargs) -> None:
    await asyncio.Event().wait()  # the step left out: waits until cancelled


def _no_run_id(*args, **kwargs) -> None:
    return None  # no run recorded: nothing of it is written or read back


# SOAK_OFF: the dashboard's steps at a server's event left out, one experiment at a time
_OFF = set(filter(None, os.environ.get("SOAK_OFF", "").split(",")))
if "metrics" in _OFF:  # /metrics and /server_info
    import sgwatch.ui.hostpane

    sgwatch.ui.hostpane.poll_metrics = _idle
if "liveness" in _OFF:  # the server's /proc entry, and discovery when it is gone
    import sgwatch.live.session

    sgwatch.live.session.check_server = _idle
if "writer" in _OFF:  # Textual's output thread: each frame written in the loop's own thread
    from textual.drivers._writer_thread import WriterThread

    def _write_now(self, text: str) -> None:
        self._file.write(text)
        self._file.flush()

    WriterThread.write = _write_now
if "history" in _OFF:  # the runs' records
    from sgwatch.control.history import History

    History.launched = _no_run_id

_FASTER = float(os.environ.get("SOAK_KEYS_FASTER", "1"))  # hours of keys in fewer
LAYOUT_EVERY_S, SEARCH_EVERY_S, TAB_EVERY_S = (s / _FASTER for s in (20, 60, 150))
SEARCH_KEYS = [
    ("slash", "/"), *[(c, c) for c in "Decode"], ("enter", "\r"),
    ("n", "n"), ("n", "n"), ("escape", "\x1b"), ("end", None),
]  # fmt: skip


def _callable_name(o: object) -> str:
    """Who a function or a bound method belongs to: where a growing count of them comes from."""
    owner = getattr(o, "__self__", None)
    prefix = f"{type(owner).__name__}." if owner is not None else ""
    return prefix + getattr(o, "__qualname__", type(o).__name__)


def lru_fill() -> dict[str, int]:
    """Entries in Textual's and Rich's lru caches now, and the most they may hold: bounded,
    they fill as new keys come and then stay full (the dashboard empties them now and then)."""
    caches = list(memos.caches())
    infos = [c.cache_info() for c in caches]
    return {
        "entries": sum(i.currsize for i in infos),
        "bound": sum(i.maxsize or 0 for i in infos),
        "unbounded": sum(1 for i in infos if i.maxsize is None),
        "full": sum(1 for i in infos if i.maxsize and i.currsize >= i.maxsize),
        "caches": len(infos),
        "largest": {
            getattr(c, "__qualname__", "?"): i.currsize
            for c, i in sorted(zip(caches, infos, strict=True), key=lambda ci: -ci[1].currsize)[:6]
        },
    }


def cyclic_garbage() -> dict:
    """What a full collection frees now (cycles only reference counting cannot free), by
    type and by the module that made the type: what swings Python's heap between passes."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        found = list(gc.garbage)
        gc.garbage.clear()
    finally:
        gc.set_debug(0)
    kinds = collections.Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in found)
    size = sum(sys.getsizeof(o) for o in found)
    # what the cycles hang from: widgets and transports dropped, the owners of methods
    roots = collections.Counter(
        type(o).__name__ for o in found if isinstance(o, Widget) or hasattr(o, "_loop")
    )
    owners = collections.Counter(
        type(o.__self__).__name__ for o in found if hasattr(o, "__self__") and callable(o)
    )
    del found
    top = dict(kinds.most_common(15))
    return {
        "objects": sum(kinds.values()),
        "kb": size // 1024,
        "types": top,
        "roots": dict(roots.most_common(8)),
        "owners": dict(owners.most_common(8)),
    }


def largest_containers(n: int = 12) -> list[str]:
    """The longest containers the collector tracks, each with what holds it (a dict's
    key, else the holder's type): a container that grows is a leak no count by type
    shows."""
    kinds = (list, dict, set, frozenset, collections.deque, bytearray)
    objs = gc.get_objects()
    top = heapq.nlargest(n, (o for o in objs if isinstance(o, kinds)), key=len)
    del objs
    return [f"{type(o).__name__}[{len(o)}] <- {_holders(o, top)}" for o in top]


def _holders(o: object, top: list) -> list[str]:
    # plain loops: a comprehension here would hold `o` in a cell, itself a referrer
    names = []
    for r in gc.get_referrers(o):
        if r is top:
            continue
        name = type(r).__name__
        if isinstance(r, dict):
            for k, v in r.items():
                if v is o:
                    name = f"[{k!r}]"
                    break
        names.append(name)
    return names[:3]


def proc_status() -> dict[str, int]:
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "Threads"):
            out[key] = int(value.split()[0])
    return out


class FullPasses:
    """The full collections the app makes (its timer's and Python's own, not the sampler's)
    and how long each paused the app (gc.callbacks)."""

    def __init__(self) -> None:
        self.ms: list[float] = []
        self.sampling = False
        self._started: float | None = None

    def __call__(self, phase: str, info: dict) -> None:
        if info["generation"] != 2 or self.sampling:
            return
        if phase == "start":
            self._started = time.perf_counter()
        elif self._started is not None:
            self.ms.append((time.perf_counter() - self._started) * 1000)
            self._started = None

    def take(self) -> list[float]:
        ms, self.ms = self.ms, []
        return [round(x, 1) for x in ms]


class SoakApp(ui_app.SgwatchApp):
    """SgwatchApp as the CLI builds it, plus the bench's sampler and keyboard."""

    CSS_PATH = str(Path(ui_app.__file__).with_name(ui_app.SgwatchApp.CSS_PATH))
    if os.environ.get("SOAK_KEEP_MEMOS") == "1":  # the baseline: caches never emptied
        MEMO_CLEAR_S = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if os.environ.get("SOAK_STRIP_CACHES") == "1":  # the baseline: Textual's own strips
            strips.restore()
        if alone_from := int(os.environ.get("SOAK_MAP_ALONE_FROM", "0")):
            LIBC.mallopt(heap.M_MMAP_THRESHOLD, alone_from)  # after leftopen.prepare's

    def on_mount(self) -> None:  # Textual calls SgwatchApp.on_mount too (after this one)
        self._soak_tasks = [
            asyncio.create_task(self._soak_sampler()),
            asyncio.create_task(self._soak_keyboard()),
        ]
        if os.environ.get("SOAK_ARENAS"):
            self._soak_tasks.append(asyncio.create_task(self._soak_arenas()))
        self._soak_latencies: list[float] = []
        self._soak_types0: collections.Counter[str] | None = None
        self._soak_trace0: tracemalloc.Snapshot | None = None
        self._soak_full = FullPasses()
        self._soak_modules = set(sys.modules)
        gc.callbacks.append(self._soak_full)

    async def _soak_sampler(self) -> None:
        every = float(os.environ.get("SOAK_EVERY", "60"))
        warmup = float(os.environ.get("SOAK_WARMUP", "300"))
        t0 = time.monotonic()
        with open(os.environ["SOAK_SAMPLES"], "a") as out:
            while True:
                await asyncio.sleep(every)
                self._soak_full.sampling = True  # its own full passes are the bench's
                try:
                    rec = self._soak_sample(time.monotonic() - t0, warmup)
                finally:
                    self._soak_full.sampling = False
                out.write(json.dumps(rec) + "\n")
                out.flush()

    async def _soak_arenas(self) -> None:
        every = float(os.environ.get("SOAK_ARENAS_EVERY", "5"))
        while True:
            a = allocator()
            peaks = {}
            if tracemalloc.is_tracing():  # the most traced at once since the last sample
                now, peak = tracemalloc.get_traced_memory()
                tracemalloc.reset_peak()
                peaks = {"traced_kb": now // 1024, "peak_kb": peak // 1024}
            self._soak_mark(arenas=a["py_arenas"], used_kb=a["py_used"], **peaks)
            await asyncio.sleep(every)

    def _soak_mark(self, **what) -> None:
        if path := os.environ.get("SOAK_ARENAS"):
            with open(path, "a") as out:
                out.write(json.dumps({"at": round(time.time(), 2), **what}) + "\n")

    def _soak_sample(self, t: float, warmup: float) -> dict:
        st = proc_status()
        rec = {
            "t": round(t),
            "rss_kb": st["VmRSS"],
            "threads": st["Threads"],
            "fds": len(os.listdir("/proc/self/fd")),
            "cpu_s": round(time.process_time(), 2),  # the process's, since it started
            "tasks": len(asyncio.all_tasks()),
            "dom_nodes": len(self._registry),
            "widgets": sum(len(s.walk_children(with_self=True)) for s in self.screen_stack),
            "screens": len(self.screen_stack),
            "keys_ms": [round(x, 1) for x in self._soak_latencies],
            "full_gc_ms": self._soak_full.take(),
            "gc_passes": [g["collections"] for g in gc.get_stats()],
            "alloc_kb": allocator(),
            "resident_kb": resident_kb(),
            "free_chunks": free_chunks(),
            **({"heap_walk": heapwalk.walk()} if os.environ.get("SOAK_HEAP_WALK") == "1" else {}),
            "modules_new": self._soak_new_modules(),
        }
        self._soak_latencies = []
        for task in self._soak_tasks:
            if task.done() and not task.cancelled() and task.exception():
                rec["bench_error"] = repr(task.exception())
        if os.environ.get("SOAK_LEAN") != "1":
            rec |= self._soak_census(t, warmup)
        return rec

    def _soak_new_modules(self) -> list[str]:
        """Modules imported since the last sample: what a first event costs once."""
        now = set(sys.modules)
        new = sorted(now - self._soak_modules)
        self._soak_modules = now
        return new

    def _soak_census(self, t: float, warmup: float) -> dict:
        """Every object counted by type, the widgets outside the DOM (after a full
        collection) and the caches' fill: what grew, at the price of a full pass and
        a walk of the heap each sample (SOAK_LEAN=1 leaves them out)."""
        objects = gc.get_objects()
        types = collections.Counter(type(o).__name__ for o in objects)
        callables = collections.Counter(_callable_name(o) for o in objects if callable(o))
        del objects
        garbage = cyclic_garbage() if os.environ.get("SOAK_GARBAGE") == "1" else None
        rec = {
            "gc_objects": sum(types.values()),
            "gc_frozen": gc.get_freeze_count(),
            "orphans": self._orphans(),
            "lru": lru_fill(),
            "largest": largest_containers(),
            "blocks": sys.getallocatedblocks(),
        }
        if garbage is not None:  # before the orphans' collection, which frees it
            rec["garbage"] = garbage
        if t >= warmup:
            if self._soak_types0 is None:
                self._soak_types0 = types
                self._soak_callables0 = callables
            grew = types - self._soak_types0
            rec["types_grown"] = dict(grew.most_common(8))
            rec["callables_grown"] = dict((callables - self._soak_callables0).most_common(6))
            if tracemalloc.is_tracing():
                snap = tracemalloc.take_snapshot()
                if self._soak_trace0 is None:
                    self._soak_trace0 = snap
                diff = snap.compare_to(self._soak_trace0, "lineno")[:10]
                rec["alloc_grown"] = [f"{d.size_diff / 1024:+.0f} KiB {d.traceback}" for d in diff]
                if tracemalloc.get_traceback_limit() > 1:
                    rec["alloc_grown_paths"] = [
                        [f"{d.size_diff / 1024:+.0f} KiB", *d.traceback.format()]
                        for d in snap.compare_to(self._soak_trace0, "traceback")[:5]
                    ]
                    snap.dump(f"{os.environ['SOAK_SAMPLES']}.{round(t)}.trace")
        return rec

    def _orphans(self) -> dict[str, int]:
        """Widgets alive after a full collection but in no screen's DOM: what keeps them."""
        gc.collect()
        alive = [o for o in gc.get_objects() if isinstance(o, Widget) and o not in self._registry]
        kinds = collections.Counter(type(o).__name__ for o in alive)
        holders = collections.Counter(
            type(r).__name__ for o in alive[:20] for r in gc.get_referrers(o) if r is not alive
        )
        return {**dict(kinds.most_common(6)), "held_by": dict(holders.most_common(6))}

    async def _soak_keyboard(self) -> None:
        await asyncio.sleep(5)
        tab = 1
        while True:  # from the overview to a host's tab (a press may be lost under load)
            await self._soak_press([(str(tab), str(tab))])
            try:
                self.pane  # noqa: B018 (raises while the overview shows)
                break
            except NoMatches:
                await asyncio.sleep(1)
        if os.environ.get("SOAK_KEYS") == "0":
            return
        last_search = last_tab = time.monotonic()
        while True:
            try:
                self._soak_latencies += await key_latencies(self, 1)
            except TimeoutError:  # no frame showed it within 10 s
                self._soak_latencies.append(10_000.0)
            now = time.monotonic()
            if now - last_search >= SEARCH_EVERY_S:
                last_search = now
                self._soak_mark(mark="search")
                await self._soak_press(SEARCH_KEYS)
            if now - last_tab >= TAB_EVERY_S and len(self.watches) > 1:
                last_tab, tab = now, tab % len(self.watches) + 1
                self._soak_mark(mark="tab")
                await self._soak_press([(str(tab), str(tab))])
            await asyncio.sleep(LAYOUT_EVERY_S)

    async def _soak_press(self, keys: list[tuple[str, str | None]]) -> None:
        for key, char in keys:
            self._driver.send_message(events.Key(key, char))
            await asyncio.sleep(0.2)


if __name__ == "__main__":
    if (frames := int(os.environ.get("SOAK_TRACE", "0"))) > 0:
        tracemalloc.start(frames)
    ui_app.SgwatchApp = SoakApp  # cli/dashboard.py imports it from there when it runs
    sys.exit(main(sys.argv[1:]))
