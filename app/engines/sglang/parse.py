"""SGLang log lines -> events. Pure; formats by release in docs/design/log-formats.md.

`Parser.parse(line)` returns the event a line carries, or None for a plain
log line. The parser keeps only the little state that multi-line records
need (a traceback in progress); everything else lives in core/state.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from itertools import chain, compress, repeat
from operator import itemgetter, mul

from sgwatch.core import events as ev
from sgwatch.core.state import HISTORY
from sgwatch.core.tqdm import looks_like_bar, parse_bar
from sgwatch.engines import compilecache
from sgwatch.engines.logtext import ACCESS, ARGPARSE_ERROR, first_float, frame_at
from sgwatch.engines.settings_dump import parse_settings
from sgwatch.engines.sglang import remedy
from sgwatch.engines.sglang.identity import identity
from sgwatch.engines.sglang.prefix import split_cut_prefix, split_prefix
from sgwatch.engines.sglang.speed import said
from sgwatch.engines.sglang.timings import STARTS as _TIMINGS
from sgwatch.engines.sglang.timings import startup_timing

_CAPTURE = re.compile(
    r"Capture (?:(?P<role>target|draft) )?(?:(?P<name>decode|verify|prefill|extend|piecewise) )?"
    r"(?:(?P<name2>extend) )?(?:cuda|CUDA|CPU|NPU|XPU|MUSA|musa) graph "
    r"(?P<verb>begin|end|bs|num tokens)"
)
_LIST = re.compile(r"\[([\d, ]*)\]")
_ELAPSED = re.compile(r"(?:elapsed=|Time elapsed: )(\d+(?:\.\d+)?) ?s")
_MEM_USAGE = re.compile(r"mem usage=(\d+(?:\.\d+)?) GB")
_ARCH = re.compile(r"type=(\w+)")
_KV_TOKENS = re.compile(r"#tokens: (\d+)")
_CAPACITY = re.compile(r"max_total_num_tokens=(\d+)")
_PATH = itemgetter(3)  # of an ACCESS match
_ACCESS_AT = "] INFO:     "  # uvicorn's access line after an SGLang stamp without rank
_ADDRESS_AT = 20 + len(_ACCESS_AT)  # where its client address starts
_ADDRESS_START = frozenset("0123456789:[")  # a client address; uvicorn's own lines are words
_ACCESS_STARTS = frozenset(_ACCESS_AT + c for c in _ADDRESS_START)
_EXCEPTION = re.compile(r"(?P<exc>[A-Za-z_][\w.]*)(?::(?: (?P<msg>.*))?)?$")
_SERVER_FRAME = re.compile(r"sglang/(?:srt|cli|launch_server|bench)")
_GEN = "gen throughput (token/s): "
_ACCEPT = "accept len: "
_2DP = re.compile(r"\d+\.\d\d(?![\d.])")  # a value SGLang prints with two decimals
# The bulk scans read those fields by the same rule as `_field_2dp`: a line's
# first key, its value or "" when none follows (the rest of the line is taken
# with it, so one match a line that holds the key).
_GEN_RATE = re.compile(f"{re.escape(_GEN)}({_2DP.pattern})?.*")
# The same, each rate as its 0.1 tok/s bucket: its text less the last decimal.
_GEN_BUCKET = re.compile(f"{re.escape(_GEN)}(?:(\\d+\\.\\d)\\d(?![\\d.]))?.*")
_ACCEPT_LEN = re.compile(f"{re.escape(_ACCEPT)}({_2DP.pattern})?.*")
# A dated record's prefix, as split_prefix reads it, up to the message.
_DATE_TIME = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
_RANK_TAGS = r"(?:\.\d{1,6})?(?: [A-Z][A-Z_]*\d+)*\] "  # after the date and time
_DATED = re.compile(_DATE_TIME.pattern + _RANK_TAGS)
_MS = re.compile(r"\.\d+")  # SGLANG_LOG_MS=1 adds milliseconds to the stamp
# The bulk sort keys a line by two slices: its stamp, `[YYYY-MM-DD HH:MM:SS`,
# and the 30 characters after it (a batch line's rank tags and label, the same
# on every batch line of a rank; an access line's `] INFO:     ` and client).
_STAMP_KEY = itemgetter(slice(0, 20))
_SHAPE_KEY = itemgetter(slice(20, 50))
# A block's stamps all dates and times, tested at once: each line's first 20
# characters joined, ASCII digits made 0, against the pattern repeated.
_DIGITS_AS_0 = bytes.maketrans(b"0123456789", b"0000000000")
_STAMP_PATTERN = b"[0000-00-00 00:00:00"
_BATCH_SHAPE = re.compile(_RANK_TAGS + "(?:(Decode batch)|Prefill batch)")
_DECODE, _PREFILL, _ACCESS_LINE = 1, 2, 4  # a line's code in the sort; 0: not sorted
_IS_DECODE = bytes(code == _DECODE for code in range(256))  # bytes.translate tables
_IS_BATCH = bytes(code in (_DECODE, _PREFILL) for code in range(256))
_IS_ACCESS = bytes(code == _ACCESS_LINE for code in range(256))
_MAX_KEYS = 256  # ms stamps make every shape new; the tables must stay small
_HEALTH_PATHS = ("/health", "/health_generate", "/ready", "/model_info", "/get_model_info")
_ITER = re.compile(r" \[\d+\]")
_BAR_KINDS = (
    ("Capturing batches", "decode"),
    ("Capturing prefill shape", "prefill"),
    ("Capturing num tokens", "piecewise"),
    ("Compiling num tokens", "compile"),
    ("checkpoint shards", "weights"),
    ("loading shards", "weights"),
)
_BAR_ITEM = re.compile(r"\((?:bs|num_tokens)=(\d+)")
# Messages that mean the server is dying, and how specific each is.
_FATAL = (
    ("Scheduler hit an exception", False, None),
    ("Received sigquit from a child process", False, 137),
    ("SIGQUIT received", False, 137),
    ("Initialization failed. warmup error", False, None),
    ("crashed with exit code", True, None),
    ("Not enough memory. Please try to increase --mem-fraction-static", True, None),
    ("scheduler died during initialization", True, None),
    ("Capture cuda graph failed", True, None),
    ("Capture prefill CUDA graph failed", True, None),
)
_TRACEBACK_LIMIT = 2000  # lines; a traceback without an exception line ends here
# `Piecewise CUDA Graph failed with error: ...` (logger.error), then the error's own
# further lines (`- Root cause: ...`) and SGLang's advice, unstamped.
_PIECEWISE_FAILED = re.compile(r"Piecewise CUDA [Gg]raph failed")
_ROOT_CAUSE = re.compile(r"-? ?Root cause: (.+)")
_ADVICE_END = ("Please report this issue", "Open an issue on GitHub")
_EXPLANATION_LIMIT = 40  # lines after the failure line that may still explain it
_FRAME_FUNC = re.compile(r", in (\w+)$")
# What a traceback frame's function says the server was doing. The event loop is
# serving whatever runs inside it; outside it, the innermost frame that names a
# phase is the one.
_EVENT_LOOP = ("run_event_loop", "dispatch_event_loop", "event_loop")
_FRAME_PHASES = {
    "init_torch_distributed": ev.STARTING,
    "load_model": ev.LOADING_WEIGHTS,
    "init_memory_pool": ev.ALLOCATING_KV_CACHE,
    "profile_max_num_token": ev.ALLOCATING_KV_CACHE,
    "init_cuda_graphs": ev.CAPTURING_GRAPHS,
    "init_device_graphs": ev.CAPTURING_GRAPHS,
    "init_piecewise_cuda_graphs": ev.CAPTURING_GRAPHS,
    "capture_model": ev.CAPTURING_GRAPHS,
    "capture": ev.CAPTURING_GRAPHS,
    "capture_one_batch_size": ev.CAPTURING_GRAPHS,
    "warmup_compile": ev.COMPILING,
}


class Parser:
    def __init__(self) -> None:
        self._tb_lines = 0  # > 0 while inside a traceback
        self._tb_server = False  # that traceback runs through SGLang's own code
        self._tb_where = ""  # innermost frame: "file.py:123 in func"
        self._tb_code = ""  # its source line
        self._tb_phase: str | None = None  # where its frames say the server was
        self._tb_crash: ev.Crash | None = None  # the crash line it began on, if any
        # A piecewise graph failure whose further lines may still come: its crash, the
        # flag SGLang's advice named, the lines read since.
        self._explaining: tuple[ev.Crash, str | None, int] | None = None
        self._capturing = False  # a graph capture began and has not ended
        self._last_ts: str | None = None  # places untimed bar frames in time
        self._stamps = _Stamps()
        self._shapes = _Shapes()

    def parse_lines(self, lines: list[str]) -> list[ev.Event]:
        """Events of a block of lines, in order.

        Runs of serving lines (decode/prefill batches, access lines) fold into
        one ServingRun: they are most of a serving log. `_codes` sorts the
        block's lines at C speed; a run of sorted lines is taken whole and its
        decode and access lines are read in bulk at the fold. Only dated,
        unwrapped records are sorted; the loop below tests the lines the sort
        left (code 0) in full, and every other line, including other shapes of
        the same records, goes through `parse`.
        """
        events: list[ev.Event] = []
        decode: list[str] = []
        access: list[str] = []  # lines that look like access lines: read at the fold
        before: list[str] = []  # for each of them, the run's last line before it
        prefill = requests = 0
        first_batch = last = ""  # the run's first batch line and its last line
        stale = False  # a serving line came after the parser's clock was last set
        codes = self._codes(lines)
        is_decode, is_batch = codes.translate(_IS_DECODE), codes.translate(_IS_BATCH)
        is_access = codes.translate(_IS_ACCESS)
        start, n = 0, len(lines)
        while start < n:
            end = codes.find(0, start)
            if end < 0:
                end = n
            if end > start:  # lines[start:end] are sorted serving lines
                run = lines[start:end]
                decode += compress(run, is_decode[start:end])
                prefill += codes.count(_PREFILL, start, end)
                if is_access.find(1, start, end) >= 0:
                    access += compress(run, is_access[start:end])
                    before += compress(chain((last,), run), is_access[start:end])
                if not first_batch and (b := is_batch.find(1, start, end)) >= 0:
                    first_batch = lines[b]
                last, stale = run[-1], True
                if end == n:
                    break
            line, start = lines[end], end + 1
            if line.startswith("[") and (dated := _DATED.match(line)):
                k = dated.end()
                if line.startswith(("Decode batch", "Prefill batch"), k):  # label past the key
                    if line[k] == "D":
                        decode.append(line)
                    else:
                        prefill += 1
                    first_batch = first_batch or line
                    last, stale = line, True
                    continue
                if line.startswith("INFO:     ", k) and (m := ACCESS.match(line, k + 10)):
                    if not m[3].startswith(_HEALTH_PATHS):
                        requests += 1
                    last, stale = line, True
                    continue
            if stale:  # serving lines set the parser's clock, as `parse` would
                self._last_ts, stale = _stamp(last), False
            event = self.parse(line)
            if event is not None:
                if last:
                    events += self._fold(
                        decode, prefill, requests, access, before, first_batch, last
                    )
                    decode, access, before = [], [], []
                    prefill, requests, first_batch, last = 0, 0, "", ""
                events.append(event)
        if last:
            if stale:
                self._last_ts = _stamp(last)
            events += self._fold(decode, prefill, requests, access, before, first_batch, last)
        return events

    def _codes(self, lines: list[str]) -> bytes:
        """Each line's code: `_DECODE`, `_PREFILL` or `_ACCESS_LINE` when its
        stamp is a date and time and its shape says so, else 0. Two slices and
        a dict lookup a line, in C; Python runs once per new stamp or shape."""
        shapes = map(self._shapes.__getitem__, map(_SHAPE_KEY, lines))
        stamps = "".join(map(_STAMP_KEY, lines)).encode("ascii", "replace")  # any other: "?"
        if stamps.translate(_DIGITS_AS_0) == _STAMP_PATTERN * len(lines):
            return bytes(shapes)
        # Some line is not stamped so (a non-ASCII digit, too): each stamp by itself.
        return bytes(map(mul, map(self._stamps.__getitem__, map(_STAMP_KEY, lines)), shapes))

    def _fold(
        self,
        decode: list[str],
        prefill: int,
        requests: int,
        access: list[str],
        before: list[str],
        first_batch: str,
        last: str,
    ) -> list[ev.Event]:
        if access:
            paths, missing = _access_paths(access)
            requests += len(paths) - sum(map(str.startswith, paths, repeat(_HEALTH_PATHS)))
            # A line that only looked like an access line is no event, so the run
            # ends at the last line before it that is one.
            i, skip = len(access) - 1, set(missing)
            while i in skip and last is access[i]:
                last, i = before[i], i - 1
            if not last:
                return []  # none of the run's lines was a serving line
        sampled, buckets, accept, in_bucket = _rates(decode)
        last_ts, newest = _stamp(last), None
        if decode:
            clock, explaining = self._last_ts, self._explaining
            newest = self.parse(decode[-1])
            self._last_ts, self._explaining = clock, explaining  # parse moved them
        assert newest is None or isinstance(newest, ev.Batch)
        run = ev.ServingRun(
            sampled[-HISTORY:],  # only the newest samples can reach the bounded history
            _stamp,
            _rate,
            buckets,
            in_bucket,
            list(map(float, accept)),
            len(decode) + prefill,
            requests,
            _stamp(first_batch) if first_batch else None,
            last_ts,
            newest,
        )
        return [run]

    def parse(self, line: str) -> ev.Event | None:
        p = split_prefix(line)
        if p is not None:
            ts, rank, msg = p
            self._last_ts = ts
        elif (cut := split_cut_prefix(line)) is not None:
            ts, (rank, msg) = None, cut  # its stamp lost its start: no time
        else:
            return self._unprefixed(line)
        self._explaining = None  # a record: the failure's own lines are over
        if msg.startswith("Decode batch"):
            return _batch("decode", msg, ts, rank)
        if msg.startswith("Prefill batch"):
            return _batch("prefill", msg, ts, rank)
        if msg.startswith("INFO:"):
            return _uvicorn(msg[5:].lstrip(), ts)
        if msg.startswith("Capture"):
            event = _capture(msg, ts, rank)
            if isinstance(event, ev.CaptureBegin | ev.CaptureEnd):
                self._capturing = isinstance(event, ev.CaptureBegin)
            return event
        if msg.startswith("Load weight begin"):
            return ev.PhaseSeen(ts, rank, ev.LOADING_WEIGHTS, "load weight begin")
        if msg.startswith("Load weight end"):
            arch = _ARCH.search(msg)
            return ev.WeightsLoaded(
                ts, rank, first_float(_ELAPSED, msg), first_float(_MEM_USAGE, msg), arch and arch[1]
            )
        if msg.startswith(("KV Cache is allocated", "Memory pool end", "Mamba Cache is allocated")):
            m = _KV_TOKENS.search(msg)
            return ev.KvCacheSized(ts, rank, int(m[1]) if m else None)
        if msg.startswith(("Init torch distributed begin", "Init parallel begin", "Init nccl")):
            return ev.PhaseSeen(ts, rank, ev.STARTING, "distributed init")
        if msg.startswith("max_total_num_tokens="):
            return ev.Capacity(ts, int(_CAPACITY.match(msg)[1]))
        if msg.startswith("The server is fired up and ready to roll"):
            return ev.Ready(ts)
        if msg.startswith("server_args="):
            args = parse_settings(msg[len("server_args=") :])
            return ev.RunStarted(ts, "server_args", args, identity=identity(args))
        if (adjusted := said(msg, ts)) is not None:
            return adjusted
        if msg.startswith(_TIMINGS):
            return startup_timing(msg, ts)
        if msg.startswith(compilecache.STARTS):  # piecewise graphs' torch.compile
            return compilecache.compiled(msg, ts, rank)
        if _PIECEWISE_FAILED.match(msg):
            # Its root cause and SGLang's advice follow: held for them as a vague line is.
            crash = ev.Crash(ts, rank, msg.strip(), line, explained=True)
            crash.remedy = partial(remedy.piecewise, None)
            self._explaining = (crash, None, 0)
            return crash
        traceback = "Traceback (most recent call last)" in msg
        if traceback:
            self._enter_traceback(server="Scheduler hit an exception" in msg or "warmup" in msg)
        for needle, specific, code in _FATAL:
            if needle in msg:
                summary = msg.split(": Traceback")[0].strip()
                crash = ev.Crash(ts, rank, summary, line, None, specific, code)
                if traceback:
                    self._tb_crash = crash
                return crash
        return None

    def _unprefixed(self, line: str) -> ev.Event | None:
        if self._explaining is not None and (refined := self._explanation(line)) is not None:
            return refined
        if self._tb_lines:
            return self._traceback_line(line)
        if line.startswith("Traceback (most recent call last)"):
            self._enter_traceback(server=False)
            return None
        if line.startswith('  File "'):  # a traceback whose header was cut off
            self._enter_traceback(server=False)
            return self._traceback_line(line)
        if looks_like_bar(line):
            return _progress(line, self._last_ts)
        if line.startswith("max_total_num_tokens="):  # 0.3/0.4 printed it unprefixed
            return ev.Capacity(None, int(_CAPACITY.match(line)[1]))
        if line.startswith("usage: "):
            return ev.Crash(
                None, None, "argument parsing failed (usage printed)", line, None, False, 2
            )
        if ": error: " in line and ARGPARSE_ERROR.fullmatch(line):
            return ev.Crash(None, None, line.strip(), line, "argparse", True, 2)
        if "is still supported, but 'sglang serve' is the recommended" in line:
            return ev.RunStarted(None, "entrypoint")
        if "torch/_dynamo/" in line or "torch._dynamo" in line:
            return ev.PhaseSeen(None, None, ev.COMPILING, "torch.compile")
        return said(line, None)

    def _explanation(self, line: str) -> ev.Crash | None:
        """A line after a piecewise graph failure: the error's root cause or SGLang's
        advice refine that crash (the advice is its last word: the crash is specific
        from then on); its report link or the next record end it."""
        crash, advice, seen = self._explaining  # type: ignore[misc]
        self._explaining = None if seen >= _EXPLANATION_LIMIT else (crash, advice, seen + 1)
        if line.startswith(_ADVICE_END):
            self._explaining = None
            return None
        if (cause := _ROOT_CAUSE.match(line.strip())) is not None:
            crash = ev.Crash(
                crash.ts,
                crash.rank,
                f"{crash.summary} (root cause: {cause[1].strip()})",
                crash.line,
                explained=True,
                remedy=crash.remedy,
            )
        elif (named := remedy.advised(line)) is not None and named != advice:
            advice = named
            crash = ev.Crash(
                crash.ts, crash.rank, crash.summary, crash.line, specific=True, explained=True
            )
            crash.remedy = partial(remedy.piecewise, named)
        else:
            return None
        if self._explaining is not None:
            self._explaining = (crash, advice, self._explaining[2])
        return crash

    def _enter_traceback(self, server: bool) -> None:
        self._tb_lines = 1
        self._tb_server = server
        self._tb_where = self._tb_code = ""  # an earlier traceback's frame is not this one's
        self._tb_phase, self._tb_crash = None, None

    def at_rest(self) -> bool:
        return not self._tb_lines and not self._capturing and self._explaining is None

    def _traceback_line(self, line: str) -> ev.Event | None:
        self._tb_lines += 1
        if self._tb_lines > _TRACEBACK_LIMIT:
            self._tb_lines = 0
            return None
        if not line or line[0] in " \t" or line.startswith(("During handling", "The above")):
            if line.startswith('  File "'):
                ours = bool(_SERVER_FRAME.search(line))
                self._tb_server = self._tb_server or ours
                self._tb_where = frame_at(line)
                self._tb_code = ""
                moved = ours and self._frame_phase(line)
                event = self._capture_traceback(line)
                if event is not None:
                    event.phase = self._tb_phase
                elif moved and self._tb_crash is not None:  # where the crash happened
                    c = self._tb_crash
                    event = ev.Crash(c.ts, c.rank, c.summary, c.line, phase=self._tb_phase)
                return event
            if line.startswith("    ") and not self._tb_code and line.strip(" ^~"):
                self._tb_code = line.strip()
                return self._capture_traceback(line)
            return None
        if line.startswith("Traceback (most recent call last)"):
            return None
        m = _EXCEPTION.match(line)
        if m is None:
            return _progress(line, self._last_ts) if looks_like_bar(line) else None
        self._tb_lines = 0
        if not self._tb_server:
            return None  # a traceback from outside the server (e.g. an exit-time warning)
        summary = line.strip()
        if not m["msg"] and self._tb_where:  # a bare `AssertionError`: say where
            summary += f" at {self._tb_where}" + (f": {self._tb_code}" if self._tb_code else "")
        return ev.Crash(None, None, summary, line, m["exc"], True, phase=self._tb_phase)

    def _frame_phase(self, line: str) -> bool:
        """Read where a frame of SGLang's own says the server was; True if that moved."""
        m = _FRAME_FUNC.search(line.rstrip())
        if m is None or self._tb_phase == ev.SERVING:
            return False  # inside the event loop, the server was serving
        func = m[1]
        phase = ev.SERVING if func.startswith(_EVENT_LOOP) else _FRAME_PHASES.get(func)
        if phase is None or phase == self._tb_phase:
            return False
        self._tb_phase = phase
        return True

    def _capture_traceback(self, line: str) -> ev.Crash | None:
        """A server traceback during graph capture is the capture failing: a crash at
        once, its innermost frame so far the cause, so a log cut before the exception
        line still says where it died. The exception line, when it comes, replaces it."""
        if not (self._capturing and self._tb_server and self._tb_where):
            return None
        where = self._tb_where + (f": {self._tb_code}" if self._tb_code else "")
        return ev.Crash(None, None, f"traceback during graph capture at {where}", line)


def _stamp(line: str) -> str:
    """The log time of a line the sorting loop took: `[YYYY-MM-DD HH:MM:SS[.ms]`."""
    if line[20] != ".":
        return line[1:20]
    m = _MS.match(line, 20)
    return line[1 : m.end()] if m else line[1:20]


class _Stamps(dict[str, bool]):
    """`[YYYY-MM-DD HH:MM:SS` -> it is one (checked once per stamp)."""

    def __missing__(self, key: str) -> bool:
        if len(self) >= _MAX_KEYS:
            self.clear()
        ok = self[key] = _DATE_TIME.match(key) is not None
        return ok


class _Shapes(dict[str, int]):
    """The 30 characters after a stamp -> the line's code, as the full test
    in `parse_lines` (`_DATED`, then the label) would sort it."""

    def __missing__(self, key: str) -> int:
        if key[: len(_ACCESS_AT) + 1] in _ACCESS_STARTS:
            return _ACCESS_LINE  # not kept: the client's port makes every key new
        m = _BATCH_SHAPE.match(key)  # within the key: the label ends by character 50
        if len(self) >= _MAX_KEYS:
            self.clear()
        code = self[key] = 0 if m is None else _DECODE if m[1] else _PREFILL
        return code


def _access_paths(access: list[str]) -> tuple[list[str], list[int]]:
    """The paths of the lines that are access lines (`_uvicorn` reads them so:
    the client starts at `_ADDRESS_AT`), and the indices of those that are not."""
    matches = list(map(ACCESS.match, access, repeat(_ADDRESS_AT)))
    if None not in matches:  # the usual run: each one an access line
        return list(map(_PATH, matches)), []
    return [m[3] for m in matches if m], [i for i, m in enumerate(matches) if m is None]


def _rates(
    decode: list[str],
) -> tuple[list[str], list[str], list[str], Callable[[str], list[str]]]:
    """The decode lines that carry a rate, their rates' buckets, the accept lengths
    among them, and the rates in a bucket: as `_batch` reads each line
    (`_field_2dp`), in bulk."""
    joined = "\n".join(decode)
    buckets = _GEN_BUCKET.findall(joined)
    if len(buckets) == len(decode) and "" not in buckets:  # every line has a rate
        accept = list(filter(None, _ACCEPT_LEN.findall(joined))) if _ACCEPT in joined else []
        return decode, buckets, accept, partial(_in_bucket, joined)
    # A decode line without a whole rate (cut short) is no sample: read each.
    sampled, buckets, accept = [], [], []
    for line in decode:
        if (rate := _field_2dp_text(line, _GEN)) is not None:
            sampled.append(line)
            buckets.append(rate[:-1])
            if (a := _field_2dp_text(line, _ACCEPT)) is not None:
                accept.append(a)
    return sampled, buckets, accept, partial(_in_bucket, "\n".join(sampled))


def _in_bucket(joined: str, bucket: str) -> list[str]:
    """The rates of the decode lines `joined` whose 0.1 tok/s bucket is `bucket`."""
    return [rate for rate in _GEN_RATE.findall(joined) if rate[:-1] == bucket]


def _rate(line: str) -> str:
    """The rate of a decode line the bulk path sampled, as printed."""
    rate = _field_2dp_text(line, _GEN)
    assert rate is not None
    return rate


def _batch(kind: str, msg: str, ts: str | None, rank: str | None) -> ev.Batch:
    body = msg[12:] if kind == "decode" else msg[13:]  # after "Decode batch"/"Prefill batch"
    if body.startswith(" ["):  # SGLANG_LOG_FORWARD_ITERS=1: "Decode batch [123], ..."
        body = _ITER.sub("", body, count=1)
    body = body[2:]  # the ". " or ", " after the label
    if kind != "decode":  # a generation rate is a decode batch's (as the bulk path reads it)
        return ev.Batch(ts, rank, kind, body, None, None)
    return ev.Batch(ts, rank, kind, body, _field_2dp(body, _GEN), _field_2dp(body, _ACCEPT))


def _field_2dp(body: str, key: str) -> float | None:
    """A field SGLang prints with two decimals; one cut short is no value."""
    text = _field_2dp_text(body, key)
    return None if text is None else float(text)


def _field_2dp_text(body: str, key: str) -> str | None:
    i = body.find(key)
    if i < 0:
        return None
    m = _2DP.match(body, i + len(key))
    return m[0] if m else None


def _uvicorn(msg: str, ts: str | None) -> ev.Event | None:
    m = ACCESS.match(msg)
    if m:
        return ev.Request(ts, m[2], m[3], int(m[4]), m[3].startswith(_HEALTH_PATHS))
    if msg.startswith(("Started server process", "Waiting for application startup", "Uvicorn")):
        return ev.PhaseSeen(ts, None, ev.WARMING_UP, "http server")
    if msg.startswith("Application startup complete"):
        return ev.PhaseSeen(ts, None, ev.WARMING_UP, "http server up")
    if msg.startswith(("Finished server process", "Application shutdown complete")):
        return ev.Stopped(ts)
    return None


def _capture(msg: str, ts: str | None, rank: str | None) -> ev.Event | None:
    m = _CAPTURE.match(msg)
    if m is None:
        return None
    role, name, verb = m["role"], m["name2"] or m["name"], m["verb"]
    if name == "piecewise" or verb == "num tokens":
        kind = "piecewise"
    elif role == "draft":
        kind = "draft" if name in (None, "decode") else f"draft_{name}"
    else:
        kind = name if name in ("verify", "prefill") else "decode"
    if verb == "end":
        return ev.CaptureEnd(
            ts, rank, kind, first_float(_ELAPSED, msg), first_float(_MEM_USAGE, msg)
        )
    rest = msg[m.end() :]
    if verb == "begin":
        return ev.CaptureBegin(ts, rank, kind, _sizes(rest))
    return ev.CaptureSizes(ts, rank, kind, _sizes(rest))


def _progress(line: str, after: str | None) -> ev.Progress | None:
    frame = parse_bar(line)
    if frame is None:
        return None
    # No description: tqdm's first frame before set_description names the bar, or a
    # bar that never names itself; the state gives it to the capture in progress.
    kind = next((k for needle, k in _BAR_KINDS if needle in frame.desc), "other")
    if not frame.desc:
        kind = "unnamed"
    item = _BAR_ITEM.search(frame.desc)
    return frame.progress(kind, item[1] if item else None, after)


def _sizes(text: str) -> list[int] | None:
    m = _LIST.search(text)
    if m is None:
        return None
    return [int(x) for x in m[1].replace(",", " ").split()]
