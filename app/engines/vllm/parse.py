"""vLLM log lines -> events (the same events as SGLang's; core/events.py). Pure.

Formats by release: docs/design/log-formats.md (vLLM) and the vllm-* logs of the
corpus, V0 0.4 to V1 0.13. The startup goes banner -> `non-default args` ->
weights -> torch.compile (inside the KV cache profiling run, so it shows as
`compiling` after `allocating_kv_cache`) -> KV cache size -> CUDA graph bars ->
`init engine ... took` -> uvicorn's `Application startup complete.` (ready) ->
`Avg generation throughput` lines every 10 s while requests run (none while
idle: vLLM logs them at DEBUG then, so silence after ready is no hang).
"""

from __future__ import annotations

import re
from itertools import compress, repeat
from operator import contains

from sgwatch.core import events as ev
from sgwatch.core.state import HISTORY, shift
from sgwatch.core.tqdm import looks_like_bar, parse_bar
from sgwatch.engines import compilecache, overrides
from sgwatch.engines.logtext import ACCESS, ARGPARSE_ERROR, first_float, frame_at
from sgwatch.engines.settings_dump import parse_settings
from sgwatch.engines.vllm.identity import identity
from sgwatch.engines.vllm.prefix import Record, clean, split

# -- serving lines, sorted in bulk ----------------------------------------------
_THROUGHPUT = " throughput: "  # the stats line (V0 and V1) and SpecDecoding's since 0.10
_ACCESS_MARK = " HTTP/1."  # uvicorn's access line: `INFO:     1.2.3.4:5 - "GET / HTTP/1.1" 200`
_GEN = "Avg generation throughput: "
_GEN_RATE = re.compile(r"Avg generation throughput: (\d+\.\d) tokens/s")  # vLLM's %.1f
# Line by line, any number of decimals is read to the first (the 0.1 tok/s bucket it is in).
_GEN_ANY = re.compile(r"Avg generation throughput: (\d+\.\d)\d*")
_ACCEPT_KEY = "Mean acceptance length: "
_ACCEPT = re.compile(r"Mean acceptance length: (\d+\.\d+)")
_IDLE = "0.0"  # a 10 s window that generated nothing: no sample
_STATS = re.compile(
    r"Running: (\d+) reqs.*?(?:Waiting|Pending): (\d+) reqs.*?GPU KV cache usage: (\d+(?:\.\d+)?)%"
)
_LINE_TIME = re.compile(r" \d\d-\d\d (\d\d:\d\d:\d\d)")
_HEALTH_PATHS = ("/health", "/ping", "/metrics", "/load", "/version")
_HEALTH = re.compile('"\\w+ (?:' + "|".join(_HEALTH_PATHS) + r")\S* HTTP/")
# -- startup --------------------------------------------------------------------
_VERSION = re.compile(r"(?:version |\(v)(\d[\w.+-]*?)\)?(?:,|$| with)")
_CONFIG_ITEM = re.compile(r"(\w+)=('[^']*'|[^,]*)")
# The engine config's items that are the run's identity (the model it resolved).
_CONFIG_KEYS = ("model", "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size")
_SECONDS = re.compile(r"took (\d+(?:\.\d+)?) ?s")
_GIB = re.compile(r"(\d+(?:\.\d+)?) ?Gi?B")
_NUMBER = re.compile(r"(\d[\d,]*)")
_DYNAMO = re.compile(r"Dynamo bytecode transform time: (\d+(?:\.\d+)?) s")
_CAPTURE_END = re.compile(
    r"Graph capturing finished in (\d+(?:\.\d+)?) secs?(?:, took ([\d.]+) GiB)?"
)
# A capture bar's label names its graphs: V1's `Capturing CUDA graphs (decode, FULL)`
# and `(mixed prefill-decode, PIECEWISE)`, the model runner V2's `(mixed, PIECEWISE)`
# and `(FULL)`, V0's `Capturing CUDA graph shapes`; a speculator's own bars name it
# (0.21: `Capturing eagle prefill CUDA graphs (FULL)`, `Capturing eagle decode CUDA
# graphs (FULL)`). Read by `_bar_kind`.
_GRAPH_BAR = "CUDA graph"
_DRAFT_WORDS = ("eagle", "draft", "dflash", "mtp", "medusa", "speculat")
_MODE_KINDS = (("PIECEWISE", "piecewise"), ("FULL", "decode"), ("shapes", "decode"))
# Steps of the profiling run that sizes the KV cache (V1's gpu_model_runner, V0's worker).
_PROFILING = (
    "Available KV cache memory",
    "Memory profiling takes",
    "Encoder cache will be initialized",
    "Profiling CUDA graph memory",
    "Estimated CUDA graph memory",
)
_DISTRIBUTED = ("Found nccl from library", "vLLM is using nccl")
_HTTP_STARTS = ("Starting vLLM API server", "Starting vLLM server", "Available routes")
_COMPILE_STARTS = (
    "Starting torch.compile",
    "Compiling a graph for",
    "Directly load the compiled graph",
    "torch.compile takes",
    "torch.compile took",
    "torch.compile and initial profiling",  # `... run together took X s in total`
)
# The engine config's compilation settings: torch.compile on (level 3, VLLM_COMPILE).
_COMPILE_ON = re.compile(r"""['"](?:level|mode)['"]: ?(?:3|<CompilationMode\.VLLM_COMPILE)""")
# -- crashes --------------------------------------------------------------------
_EXCEPTION = re.compile(
    r"(?P<exc>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure))(?::\s?(?P<msg>.*))?"
)
# Messages that mean the server is dying; specific ones name the cause, generic ones
# ("see root cause above") give way to the exception line that does.
_FATAL = (
    ("EngineCore failed to start", False),
    ("EngineCore encountered a fatal error", False),
    ("Engine core initialization failed", False),
    ("died unexpectedly", False),
    ("WorkerProc hit an exception", False),
    ("WorkerProc failed to start", False),
    ("CUDA out of memory", True),
)
_SEE_ABOVE = "See root cause above"
_TRACEBACK_STARTS = ("Traceback (most recent call last)", '  File "')
# Files of the API server: its ERROR lines are one request's failure, not the engine's.
_FRONTEND_FILES = ("api_server.py", "launcher.py", "serving_", "protocol.py", "chat_utils.py")
_TRACEBACK_LIMIT = 2000  # lines; a traceback without an exception line ends here
# -- settings the server changed from what was asked (warnings) ----------------
_OVERRIDES = (
    # (pattern, setting, effective value or group, requested value or group)
    (
        re.compile(r"CUDAGraphMode\.(\w+) is not supported.*?setting cudagraph_mode=(\w+)"),
        "cudagraph_mode",
        2,
        1,
    ),
    (
        re.compile(r"Capping cudagraph capture sizes from max (\d+) to (\d+)"),
        "max_cudagraph_capture_size",
        2,
        1,
    ),
    (re.compile(r"Cudagraph is disabled under eager mode"), "cudagraph_mode", "NONE", None),
    (
        re.compile(r"Enforce eager set, overriding optimization level to -O(\d)"),
        "optimization_level",
        1,
        None,
    ),
    (re.compile(r"Enforce eager set, disabling torch\.compile"), "compilation_mode", "NONE", None),
    (re.compile(r"Custom allreduce is disabled because"), "disable_custom_all_reduce", True, None),
)
_OVERRIDE_HINTS = (
    "Capping cudagraph",
    "Cudagraph is disabled",
    "Enforce eager",
    "Custom allreduce is disabled",
)


class Parser:
    def __init__(self) -> None:
        self._last_ts: str | None = None  # places untimed lines (bars, uvicorn) in time
        self._args: dict = {}  # this run's settings as logged so far
        self._release: str | None = None  # as the banner or the engine config states it
        self._graph_kind: str | None = None  # the capture a `Graph capturing finished` ends
        self._compiles = False  # this run compiles its model (it then captures piecewise)
        self._kv_tokens: int | None = None  # the smallest worker's KV cache so far
        self._tb_lines = 0  # > 0 while inside a traceback
        self._tb_server = False  # that traceback runs through vLLM's own code
        self._tb_where = ""  # innermost frame: "file.py:123 in func"

    # -- blocks -----------------------------------------------------------------

    def parse_lines(self, lines: list[str]) -> list[ev.Event]:
        """Events of a block of lines, in order.

        Serving lines (stats, SpecDecoding, access lines) are most of a serving log
        and change only counters: two C-level passes flag them, and each run of
        them folds into one ServingRun, read in bulk. Every other line goes
        through `parse`; a run ends only where one of them is an event.
        """
        n = len(lines)
        stats = int.from_bytes(bytes(map(contains, lines, repeat(_THROUGHPUT))), "big")
        access = int.from_bytes(bytes(map(contains, lines, repeat(_ACCESS_MARK))), "big") & ~stats
        is_stats, is_access = stats.to_bytes(n, "big"), access.to_bytes(n, "big")
        serving = (stats | access).to_bytes(n, "big")
        events: list[ev.Event] = []
        run_stats: list[str] = []
        run_access: list[str] = []
        run: list[tuple[list[str], str | None]] = []  # its chunks, each with the clock before it
        clock = self._last_ts  # the parser's clock at the run's last line: its event's time
        start = 0
        while start < n:
            end = serving.find(0, start)
            if end < 0:
                end = n
            if end > start:
                chunk = lines[start:end]
                run.append((chunk, self._last_ts))
                if is_stats.find(1, start, end) >= 0:
                    run_stats += compress(chunk, is_stats[start:end])
                # The clock, as `parse` would have set it: the last stamp in the chunk.
                self._last_ts = next(filter(None, map(_stamp, reversed(chunk))), self._last_ts)
                if is_access.find(1, start, end) >= 0:
                    run_access += compress(chunk, is_access[start:end])
                clock = self._last_ts
                if end == n:
                    break
            line, start = lines[end], end + 1
            for piece in _pieces(line):
                event = self.parse(piece)
                if event is None:
                    continue
                if run:
                    events += self._fold(run, run_stats, run_access, clock)
                    run, run_stats, run_access = [], [], []
                events.append(event)
        if run:
            events += self._fold(run, run_stats, run_access, clock)
        return events

    def _fold(
        self,
        run: list[tuple[list[str], str | None]],
        stats: list[str],
        access: list[str],
        clock: str | None,
    ) -> list[ev.Event]:
        """One ServingRun for a run of serving lines; or, when some line only looked
        like one (cut short, another record), the events of each line of the run
        read by `parse` in order, each chunk from the clock before it, as reading
        line by line would have. The parser's clock is left as it is now."""
        now = self._last_ts
        events = self._read_run(stats, access, clock)
        if events is None:
            events = []
            for chunk, before in run:
                self._last_ts = before
                events += filter(None, map(self.parse, chunk))
        self._last_ts = now
        return events

    def _read_run(
        self, stats: list[str], access: list[str], clock: str | None
    ) -> list[ev.Event] | None:
        """The run's ServingRun, read in bulk; None when it must be read line by line."""
        requests = 0
        if access:
            joined = "\n".join(access)
            if joined.count(' - "') != len(access):  # each one request, as `_uvicorn` reads it
                return None
            requests = len(access) - len(_HEALTH.findall(joined))
        rates: list[str] = []
        sampled: list[str] = []
        accept: list[float] = []
        if stats:
            joined = "\n".join(stats)
            rates = _GEN_RATE.findall(joined)
            found = _ACCEPT.findall(joined) if _ACCEPT_KEY in joined else []
            if len(rates) + len(found) == len(stats):
                if not found:
                    sampled = stats
                else:  # the newest rate lines only: all the history keeps
                    window = stats[-(HISTORY + len(found) + rates.count(_IDLE)) :]
                    sampled = list(compress(window, map(contains, window, repeat(_GEN))))
                accept += map(float, found)
            else:  # a line cut short, or not a stats line at all
                return None
            if _IDLE in rates:  # `sampled` are the newest of the lines `rates` were read from
                keep = [r != _IDLE for r in rates]
                sampled = list(compress(sampled, keep[len(keep) - len(sampled) :]))
                rates = list(compress(rates, keep))
        # The newest stats line, idle or not: the load it shows is the load now. The
        # first is where serving began (a SpecDecoding line alone is no batch).
        last = next((s for s in reversed(stats) if _GEN in s), None)
        first = next((s for s in stats if _GEN in s), None)
        if clock is None:  # access lines before any stamp: no time to give them
            return [ev.Request(None, "", "", None)] * requests
        return [
            ev.ServingRun(
                sampled[-HISTORY:],
                _stamp,
                _rate,
                rates,  # vLLM prints one decimal: each rate is its own 0.1 tok/s bucket
                _alone,
                accept,
                len(stats),
                requests,
                None if first is None else _stamp(first),
                clock,
                None if last is None else self._batch(last, _stamp(last), None),
            )
        ]

    def at_rest(self) -> bool:
        return not self._tb_lines

    # -- one line ---------------------------------------------------------------

    def parse(self, line: str) -> ev.Event | None:
        line = clean(line)
        found = split(line)
        if found is None:
            return self._untagged(line, None, None)
        ts, rank, msg = found.ts, found.rank, found.message
        if ts is None:  # a tag without a stamp: uvicorn, a traceback, a bar
            if msg.startswith("INFO:"):
                return self._uvicorn(msg[5:].lstrip())
            return self._untagged(msg, rank, line)
        self._last_ts = ts
        engine_error = found.level == "ERROR" and _from_engine(found)
        if self._tb_lines or msg.startswith(_TRACEBACK_STARTS):
            handled, event = self._traceback_line(msg, ts, rank, line)
            # A traceback that ended without a crash (no frame in vLLM's code: maybe
            # cut off) still ends in one when an engine process logged it as an error.
            if handled and (event is not None or self._tb_lines or not engine_error):
                return event
        if _GEN in msg:
            return self._batch(msg, ts, rank)
        if msg.startswith("SpecDecoding metrics") and (a := _ACCEPT.search(msg)):
            return ev.ServingRun([], _stamp, _rate, [], _alone, [float(a[1])], 0, 0, None, ts, None)
        if engine_error and (m := _EXCEPTION.fullmatch(msg.strip())) is not None:
            # An engine process's exception line is a crash, even where the log begins
            # after its traceback's header (a rotated file, `kubectl logs --tail`).
            summary = msg.strip()
            return ev.Crash(ts, rank, summary, line, m["exc"], _SEE_ABOVE not in summary)
        return self._record(msg, ts, rank, line)

    def _record(self, msg: str, ts: str, rank: str | None, line: str) -> ev.Event | None:
        if msg.startswith(("vLLM API server version", "vLLM server version")):
            self._args, self._graph_kind, self._kv_tokens = {}, None, None
            self._compiles = False
            self._release = _version(msg)
            return ev.RunStarted(ts, "banner", None, self._release)
        if msg.startswith("non-default args: "):
            self._args.update(parse_settings(msg[len("non-default args: ") :]))
            return self._settings(ts, "non-default args")
        if msg.startswith("args: Namespace("):  # V0's api_server: the argparse Namespace repr
            self._args.update(parse_settings(msg[len("args: ") :]))
            return self._settings(ts, "args")
        if msg.startswith("Using max model len "):  # the resolved value: not always the asked one
            m = _NUMBER.match(msg, len("Using max model len "))
            return ev.Resolved(ts, "max_model_len", int(m[1]), msg) if m else None
        if msg.startswith(("Initializing a V1 LLM engine", "Initializing an LLM engine")):
            config = dict(_CONFIG_ITEM.findall(msg[msg.find("config:") :]))
            for key in _CONFIG_KEYS:
                if key in config:
                    self._args[key] = _literal(config[key])
            self._release = _version(msg) or self._release
            self._compiles = self._compiles or _COMPILE_ON.search(msg) is not None
            return self._settings(ts, "engine config", _version(msg))
        if msg.startswith(("Starting to load model", "Loading model from scratch")) or (
            msg.startswith("Loading model weights") and "took" not in msg
        ):
            return ev.PhaseSeen(ts, rank, ev.LOADING_WEIGHTS, "loading model")
        if msg.startswith("Using model weights format"):
            return ev.PhaseSeen(ts, rank, ev.LOADING_WEIGHTS, "loading model")
        if msg.startswith("Loading weights took"):
            return ev.WeightsLoaded(ts, rank, first_float(_SECONDS, msg), None)
        if msg.startswith(("Model loading took", "Loading model weights took")):
            return ev.WeightsLoaded(ts, rank, None, first_float(_GIB, msg))
        if m := _DYNAMO.search(msg):
            self._compiles = True
            # Dynamo traced the model for that long before saying so: compiling began then.
            return ev.PhaseSeen(shift(ts, -float(m[1])), rank, ev.COMPILING, "torch.compile")
        if msg.startswith(compilecache.STARTS) and (c := compilecache.compiled(msg, ts, rank)):
            self._compiles = True
            return c  # the state takes it as compile evidence too
        if msg.startswith(_COMPILE_STARTS):
            self._compiles = True
            return ev.PhaseSeen(ts, rank, ev.COMPILING, "torch.compile")
        if "KV cache size: " in msg:
            m = _NUMBER.search(msg, msg.find("KV cache size: "))
            if m is None:
                return ev.KvCacheSized(ts, rank, None)
            # One line per worker; the engine sizes every worker's cache to the smallest.
            tokens = int(m[1].replace(",", ""))
            self._kv_tokens = min(tokens, self._kv_tokens or tokens)
            return ev.KvCacheSized(ts, rank, self._kv_tokens)
        if msg.startswith(("# GPU blocks", "# cuda blocks", "# CUDA blocks")):
            return ev.KvCacheSized(ts, rank, None)
        if msg.startswith(_PROFILING):
            return ev.KvCacheSized(ts, rank, None)
        if msg.startswith(_DISTRIBUTED) or "is assigned as DP rank" in msg:
            return ev.PhaseSeen(ts, rank, ev.STARTING, "distributed init")
        if msg.startswith(
            ("Capturing cudagraphs for decoding", "Capturing the model for CUDA graphs")
        ):
            self._graph_kind = "decode"
            return ev.CaptureBegin(ts, rank, "decode")
        if msg.startswith("Graph capturing finished"):
            m = _CAPTURE_END.match(msg)
            seconds = float(m[1]) if m else None
            mem = float(m[2]) if m and m[2] else None
            # No bar named the capture: V1's runner captures piecewise graphs by default.
            kind = self._graph_kind or ("piecewise" if "gpu_model_runner" in line else "decode")
            return ev.CaptureEnd(ts, rank, kind, seconds, mem)
        if msg.startswith("init engine (profile, create kv cache, warmup model) took"):
            return ev.PhaseSeen(ts, rank, ev.WARMING_UP, "engine initialised")
        # The API server's lines after the engine's handshake: the engine is up (its
        # cache sized, its graphs captured) and the HTTP server starts; ready is
        # uvicorn's `Application startup complete.` (api_server.py: `Supported tasks`,
        # `Starting vLLM server on`, launcher.py: `Available routes are:`, `Route: `).
        if msg.startswith("Supported tasks: "):
            return ev.PhaseSeen(ts, rank, ev.WARMING_UP, "engine initialised")
        if msg.startswith(_HTTP_STARTS) or (msg.startswith("Route: ") and ", Methods: " in msg):
            return ev.PhaseSeen(ts, rank, ev.WARMING_UP, "http server")
        if (msg.startswith(_OVERRIDE_HINTS) or "setting cudagraph_mode=" in msg) and (
            o := overrides.said(_OVERRIDES, msg, ts)
        ) is not None:
            return o
        for needle, specific in _FATAL:
            if needle in msg:
                return ev.Crash(ts, rank, msg.strip(), line, None, specific)
        return None

    def _settings(self, ts: str, reason: str, version: str | None = None) -> ev.RunStarted:
        """The run's settings as logged so far, and the identity they make."""
        args = dict(self._args)
        return ev.RunStarted(ts, reason, args, version, identity(args, self._release))

    def _untagged(self, text: str, rank: str | None, line: str | None) -> ev.Event | None:
        """A line without a stamp: a traceback, a tqdm frame, argparse, uvicorn."""
        line = line or text
        if self._tb_lines or text.startswith(_TRACEBACK_STARTS):
            handled, event = self._traceback_line(text, None, rank, line)
            if handled:
                return event
        if looks_like_bar(text):
            return self._progress(text)
        if text.startswith("INFO:"):
            return self._uvicorn(text[5:].lstrip())
        if text.startswith("usage: "):
            return ev.Crash(
                None, None, "argument parsing failed (usage printed)", line, None, False, 2
            )
        if ": error: " in text and ARGPARSE_ERROR.fullmatch(text):
            return ev.Crash(None, None, text.strip(), line, "argparse", True, 2)
        return None

    def _traceback_line(
        self, text: str, ts: str | None, rank: str | None, line: str
    ) -> tuple[bool, ev.Event | None]:
        """(whether the line belongs to a traceback, the crash its exception line means)."""
        if text.startswith("Traceback (most recent call last)"):
            self._tb_lines, self._tb_server, self._tb_where = 1, False, ""
            return True, None
        if not self._tb_lines:
            self._tb_lines, self._tb_server, self._tb_where = 1, False, ""  # header cut off
        self._tb_lines += 1
        if self._tb_lines > _TRACEBACK_LIMIT:
            self._tb_lines = 0
            return False, None
        if (
            not text.strip()
            or text[0] in " \t"
            or text.startswith(("During handling", "The above"))
        ):
            if text.startswith('  File "'):
                self._tb_server = self._tb_server or "/vllm/" in text
                self._tb_where = frame_at(text)
            return True, None
        m = _EXCEPTION.fullmatch(text.strip())
        if m is None:
            return False, None  # another process's record, between the traceback's lines
        self._tb_lines = 0
        if not self._tb_server:
            return True, None  # a traceback from outside the server
        summary = text.strip()
        if not m["msg"] and self._tb_where:  # a bare `AssertionError`: say where
            summary += f" at {self._tb_where}"
        # The API server's "see root cause above" gives way to the engine's own exception.
        specific = _SEE_ABOVE not in summary
        return True, ev.Crash(ts, rank, summary, line, m["exc"], specific)

    def _progress(self, text: str) -> ev.Progress | None:
        frame = parse_bar(text)
        if frame is None or not frame.desc:
            return None
        kind = self._bar_kind(frame.desc)
        if kind not in ("weights", "other"):
            self._graph_kind = kind
        return frame.progress(kind, None, self._last_ts)

    def _bar_kind(self, desc: str) -> str:
        """What a bar measures, by its label (core/events.py's Progress kinds)."""
        if "checkpoint shards" in desc:
            return "weights"
        if _GRAPH_BAR not in desc:
            return "other"
        words = desc.lower()
        prefill = "prefill" in words and "prefill-decode" not in words
        if any(w in words for w in _DRAFT_WORDS):
            return "draft_prefill" if prefill else "draft"
        if prefill:
            return "prefill"
        # 0.9's V1 runner labels no mode: with torch.compile on, its graphs are piecewise.
        bare = "piecewise" if self._compiles else "decode"
        return next((k for mode, k in _MODE_KINDS if mode in desc), bare)

    def _uvicorn(self, msg: str) -> ev.Event | None:
        m = ACCESS.match(msg)
        if m:
            return ev.Request(self._last_ts, m[2], m[3], int(m[4]), m[3].startswith(_HEALTH_PATHS))
        if msg.startswith("Application startup complete"):
            return ev.Ready(self._last_ts)
        if msg.startswith(("Started server process", "Waiting for application startup")):
            return ev.PhaseSeen(self._last_ts, None, ev.WARMING_UP, "http server")
        if msg.startswith(("Finished server process", "Application shutdown complete")):
            return ev.Stopped(self._last_ts)
        return None

    def _batch(self, msg: str, ts: str | None, rank: str | None) -> ev.Batch:
        """A stats line as a decode batch: its rate, and its load in the common keys."""
        m = _GEN_ANY.search(msg)
        rate = float(m[1]) if m and m[1] != _IDLE else None
        s = _STATS.search(msg)
        body = (
            f"#running-req: {s[1]}, #queue-req: {s[2]}, token usage: {float(s[3]) / 100:.3f}"
            if s
            else ""
        )
        return ev.Batch(ts, rank, "decode", body, rate, None)


def _stamp(line: str) -> str:
    """The time of a stamped line (`INFO 09-24 20:55:08 ...` -> "20:55:08"), else ""."""
    m = _LINE_TIME.search(line)
    return m[1] if m else ""


def _rate(line: str) -> str:
    """The rate of a stats line the bulk path sampled, as printed."""
    m = _GEN_ANY.search(line)
    assert m is not None
    return m[1]


def _alone(bucket: str) -> list[str]:
    """The rates in a 0.1 tok/s bucket, for rates printed with one decimal."""
    return [bucket]


_GLUED = re.compile(r"\(\w+(?: (?:rank=\d+|[A-Z]+\d+(?:_[A-Z]+\d+)*))* pid=\d+")


def _pieces(line: str) -> list[str]:
    """A tqdm frame with another process's record glued after it is two lines."""
    if "%|" in line and (m := _GLUED.search(line, 1)) is not None:
        return [line[: m.start()], line[m.start() :]]
    return [line]


def _from_engine(record: Record) -> bool:
    """Whether a record comes from an engine process: a worker, an engine core, or
    (untagged, V0's single process) a file outside the API server."""
    if record.process is not None:
        return not record.process.startswith(("APIServer", "ApiServer"))
    return not (record.source or "").startswith(_FRONTEND_FILES)


def _version(msg: str) -> str | None:
    m = _VERSION.search(msg)
    return m[1] if m else None


def _literal(text: str) -> object:
    text = text.strip()
    if text.startswith("'") and text.endswith("'"):
        return text[1:-1]
    try:
        return int(text)
    except ValueError:
        return text
