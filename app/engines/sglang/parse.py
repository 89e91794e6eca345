"""SGLang log lines -> events. Pure; formats by version in shared engines.md.

`Parser.parse(line)` returns the event a line carries, or None for a plain
log line. The parser keeps only the little state that multi-line records
need (a traceback in progress); everything else lives in core/state.py.
"""

from __future__ import annotations

import re
from itertools import repeat

from sgwatch.core import events as ev
from sgwatch.core.state import HISTORY
from sgwatch.core.tqdm import looks_like_bar, parse_bar
from sgwatch.engines.sglang.prefix import split_prefix
from sgwatch.engines.sglang.server_args import parse_server_args

_CAPTURE = re.compile(
    r"Capture (?:(?P<role>target|draft) )?(?:(?P<name>decode|verify|prefill|extend|piecewise) )?"
    r"(?:(?P<name2>extend) )?(?:cuda|CUDA|CPU|NPU|XPU|MUSA|musa) graph "
    r"(?P<verb>begin|end|bs|num tokens)"
)
_LIST = re.compile(r"\[([\d, ]*)\]")
_ELAPSED = re.compile(r"(?:elapsed=|Time elapsed: )(\d+(?:\.\d+)?) ?s")
_MEM_USAGE = re.compile(r"mem usage=(\d+(?:\.\d+)?) GB")
_KV_TOKENS = re.compile(r"#tokens: (\d+)")
_CAPACITY = re.compile(r"max_total_num_tokens=(\d+)")
_ACCESS = re.compile(r'(\S+) - "(\w+) (\S+) HTTP/[\d.]+" (\d{3})')
_ACCESS_AT = "] INFO:     "  # uvicorn's access line after an SGLang stamp without rank
_ADDRESS_AT = 20 + len(_ACCESS_AT)  # where its client address starts
_ADDRESS_START = frozenset("0123456789:[")  # a client address; uvicorn's own lines are words
_ACCESS_STARTS = frozenset(_ACCESS_AT + c for c in _ADDRESS_START)
_EXCEPTION = re.compile(r"(?P<exc>[A-Za-z_][\w.]*)(?::(?: (?P<msg>.*))?)?$")
_ARGPARSE_ERROR = re.compile(r"[\w./ -]+: error: .+")
_SERVER_FRAME = re.compile(r"sglang/(?:srt|cli|launch_server|bench)")
_GEN = "gen throughput (token/s): "
_ACCEPT = "accept len: "
_2DP = re.compile(r"\d+\.\d\d(?![\d.])")  # a value SGLang prints with two decimals
# The bulk scans read those fields by the same rule as `_field_2dp`.
_GEN_RATE = re.compile(f"{re.escape(_GEN)}({_2DP.pattern})")
_ACCEPT_LEN = re.compile(f"{re.escape(_ACCEPT)}({_2DP.pattern})")
# A dated record's prefix, as split_prefix reads it, up to the message.
_DATE_TIME = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
_DATED = re.compile(_DATE_TIME.pattern + r"(?:\.\d{1,6})?(?: [A-Z][A-Z_]*\d+)*\] ")
_MS = re.compile(r"\.\d+")  # SGLANG_LOG_MS=1 adds milliseconds to the stamp
_STAMP = slice(0, 20)  # `[YYYY-MM-DD HH:MM:SS`
_SHAPE = slice(20, 50)  # of a batch line: the rank tags and the label, the same on every line
_ACCESS_SHAPE = slice(20, _ADDRESS_AT + 1)  # of an access line: `] INFO:     `, 1 char
_MAX_SHAPES = 256  # ms stamps make every shape new; the tables must stay small
_HEALTH_PATHS = ("/health", "/health_generate", "/ready", "/model_info", "/get_model_info")
_ITER = re.compile(r" \[\d+\]")
_FRAME = re.compile(r'  File "(?:[^"]*/)?([^"/]+)", line (\d+), in (\S+)')
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


class Parser:
    def __init__(self) -> None:
        self._tb_lines = 0  # > 0 while inside a traceback
        self._tb_server = False  # that traceback runs through SGLang's own code
        self._tb_where = ""  # innermost frame: "file.py:123 in func"
        self._tb_code = ""  # its source line
        self._last_ts: str | None = None  # places untimed bar frames in time
        # line[_SHAPE] of batch lines that passed the full test in parse_lines
        # (-> decode: True, prefill: False); line[_STAMP] of lines seen dated.
        self._batch_shapes: dict[str, bool] = {}
        self._stamps: dict[str, bool] = {}

    def parse_lines(self, lines: list[str]) -> list[ev.Event]:
        """Events of a block of lines, in order.

        Runs of serving lines (decode/prefill batches, access lines) fold into
        one ServingRun: they are most of a serving log. `_serving_run` only
        sorts them; decode and access lines are then read
        in bulk at the fold. Only dated, unwrapped records take that path; the
        loop below tests the lines it stops at in full, and every other line,
        including other shapes of the same records, goes through `parse`.
        """
        events: list[ev.Event] = []
        decode: list[str] = []
        access: list[str] = []  # lines that look like access lines: read at the fold
        before: list[str] = []  # for each of them, the run's last line before it
        prefill = requests = 0
        first_batch = last = ""  # the run's first batch line and its last line
        stale = False  # a serving line came after the parser's clock was last set
        shapes = self._batch_shapes
        serving = self._serving_run
        start, n = 0, len(lines)
        while start < n:
            end, d, p, a, b, fb, last = serving(lines, start, last)
            if end > start:
                decode += d
                prefill += p
                access += a
                before += b
                first_batch = first_batch or fb
                stale = True
                if end == n:
                    break
            line, start = lines[end], end + 1
            if line.startswith("[") and (dated := _DATED.match(line)):
                k = dated.end()
                if line.startswith("Decode batch", k):
                    decode.append(line)
                    first_batch = first_batch or line
                    last, stale = line, True
                    _learn(shapes, line, k + 12, _SHAPE, True)
                    continue
                if line.startswith("Prefill batch", k):
                    prefill += 1
                    first_batch = first_batch or line
                    last, stale = line, True
                    _learn(shapes, line, k + 13, _SHAPE, False)
                    continue
                if k == _ADDRESS_AT - 10 and line[_ACCESS_SHAPE] in _ACCESS_STARTS:
                    access.append(line)  # read at the fold, as `_serving_run` would
                    before.append(last)
                    last, stale = line, True
                    continue
                if line.startswith("INFO:     ", k) and (m := _ACCESS.match(line, k + 10)):
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

    def _serving_run(
        self, lines: list[str], start: int, last: str
    ) -> tuple[int, list[str], int, list[str], list[str], str, str]:
        """Read lines[start:] while they are serving lines: after a stamp (a
        new one is checked once), a batch line by the 30 characters that
        follow (rank tags and label, the same on every batch line of a rank)
        when a line of that shape passed the full test in `parse_lines`, an
        access line by `] INFO:     ` and the first character of a client
        address.
        Returns where it stopped, the decode lines, the number of prefill
        lines, the access lines, the run's last line before each, the first
        batch line ("" if none) and the last line read (else `last`)."""
        decode: list[str] = []
        access: list[str] = []
        before: list[str] = []
        prefill, first_batch = 0, ""
        known, stamps = self._batch_shapes.get, self._stamps
        for i in range(start, len(lines)):  # (islice would walk past lines[:start] each call)
            line = lines[i]
            if line[_STAMP] not in stamps:
                if _DATE_TIME.match(line) is None:
                    break
                _learn(stamps, line, 20, _STAMP, True)
            if (is_decode := known(line[_SHAPE])) is not None:
                if is_decode:
                    decode.append(line)
                else:
                    prefill += 1
                first_batch = first_batch or line
            elif line[_ACCESS_SHAPE] in _ACCESS_STARTS:
                access.append(line)
                before.append(last)
            else:
                break
            last = line
        end = start + len(decode) + prefill + len(access)
        return end, decode, prefill, access, before, first_batch, last

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
        sampled, rates, accept = _rates(decode)
        last_ts, newest = _stamp(last), None
        if decode:
            clock, newest = self._last_ts, self.parse(decode[-1])
            self._last_ts = clock  # parse moved it
        assert newest is None or isinstance(newest, ev.Batch)
        run = ev.ServingRun(
            sampled[-HISTORY:],  # only the newest samples can reach the bounded history
            _stamp,
            rates,
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
        if p is None:
            return self._unprefixed(line)
        ts, rank, msg = p
        self._last_ts = ts
        if msg.startswith("Decode batch"):
            return _batch("decode", msg, ts, rank)
        if msg.startswith("Prefill batch"):
            return _batch("prefill", msg, ts, rank)
        if msg.startswith("INFO:"):
            return _uvicorn(msg[5:].lstrip(), ts)
        if msg.startswith("Capture"):
            return _capture(msg, ts, rank)
        if msg.startswith("Load weight begin"):
            return ev.PhaseSeen(ts, rank, ev.LOADING_WEIGHTS, "load weight begin")
        if msg.startswith("Load weight end"):
            return ev.WeightsLoaded(ts, rank, _float(_ELAPSED, msg), _float(_MEM_USAGE, msg))
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
            return ev.RunStarted(ts, "server_args", parse_server_args(msg[len("server_args=") :]))
        if "Traceback (most recent call last)" in msg:
            self._enter_traceback(server="Scheduler hit an exception" in msg or "warmup" in msg)
        for needle, specific, code in _FATAL:
            if needle in msg:
                summary = msg.split(": Traceback")[0].strip()
                return ev.Crash(ts, rank, summary, line, None, specific, code)
        return None

    def _unprefixed(self, line: str) -> ev.Event | None:
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
        if ": error: " in line and _ARGPARSE_ERROR.fullmatch(line):
            return ev.Crash(None, None, line.strip(), line, "argparse", True, 2)
        if "is still supported, but 'sglang serve' is the recommended" in line:
            return ev.RunStarted(None, "entrypoint")
        if "torch/_dynamo/" in line or "torch._dynamo" in line:
            return ev.PhaseSeen(None, None, ev.COMPILING, "torch.compile")
        return None

    def _enter_traceback(self, server: bool) -> None:
        self._tb_lines = 1
        self._tb_server = server

    def _traceback_line(self, line: str) -> ev.Event | None:
        self._tb_lines += 1
        if self._tb_lines > _TRACEBACK_LIMIT:
            self._tb_lines = 0
            return None
        if not line or line[0] in " \t" or line.startswith(("During handling", "The above")):
            if line.startswith('  File "'):
                self._tb_server = self._tb_server or bool(_SERVER_FRAME.search(line))
                frame = _FRAME.match(line)
                self._tb_where = f"{frame[1]}:{frame[2]} in {frame[3]}" if frame else ""
                self._tb_code = ""
            elif line.startswith("    ") and not self._tb_code and line.strip(" ^~"):
                self._tb_code = line.strip()
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
        return ev.Crash(None, None, summary, line, m["exc"], True)


def _stamp(line: str) -> str:
    """The log time of a line the sorting loop took: `[YYYY-MM-DD HH:MM:SS[.ms]`."""
    if line[20] != ".":
        return line[1:20]
    m = _MS.match(line, 20)
    return line[1 : m.end()] if m else line[1:20]


def _learn(shapes: dict[str, bool], line: str, end: int, shape: slice, value: bool) -> None:
    """Remember a line's shape when what the full test read (up to `end`) lies
    inside it: every line with the same `line[shape]` then passes it the same way."""
    if end <= shape.stop:
        if len(shapes) >= _MAX_SHAPES:
            shapes.clear()
        shapes[line[shape]] = value


def _access_paths(access: list[str]) -> tuple[list[str], list[int]]:
    """The paths of the lines that are access lines (`_uvicorn` reads them so:
    the client starts at `_ADDRESS_AT`), and the indices of those that are not."""
    matches = list(map(_ACCESS.match, access, repeat(_ADDRESS_AT)))
    return [m[3] for m in matches if m], [i for i, m in enumerate(matches) if m is None]


def _rates(decode: list[str]) -> tuple[list[str], list[str], list[str]]:
    """The decode lines that carry a rate, their rates, and the accept lengths
    among them: as `_batch` reads each line (`_field_2dp`), in bulk."""
    joined = "\n".join(decode)
    rates = _GEN_RATE.findall(joined)
    # The scans read a line's first key only when each line has exactly one.
    if (
        len(rates) == len(decode) == joined.count(_GEN)
        and all(map(str.__contains__, decode, repeat(_GEN)))
        and (_ACCEPT not in joined or _one_each(decode, joined, _ACCEPT))
    ):
        accept = _ACCEPT_LEN.findall(joined) if _ACCEPT in joined else []
        return decode, rates, accept
    # A decode line without a whole rate (cut short) is no sample: read each.
    sampled, rates, accept = [], [], []
    for line in decode:
        if (rate := _field_2dp_text(line, _GEN)) is not None:
            sampled.append(line)
            rates.append(rate)
            if (a := _field_2dp_text(line, _ACCEPT)) is not None:
                accept.append(a)
    return sampled, rates, accept


def _one_each(lines: list[str], joined: str, key: str) -> bool:
    """Every line holds key once, or not at all."""
    return joined.count(key) == sum(map(str.__contains__, lines, repeat(key)))


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
    m = _ACCESS.match(msg)
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
        return ev.CaptureEnd(ts, rank, kind, _float(_ELAPSED, msg), _float(_MEM_USAGE, msg))
    rest = msg[m.end() :]
    if verb == "begin":
        return ev.CaptureBegin(ts, rank, kind, _sizes(rest))
    return ev.CaptureSizes(ts, rank, kind, _sizes(rest))


def _progress(line: str, after: str | None) -> ev.Progress | None:
    frame = parse_bar(line)
    if frame is None or not frame.desc:
        return None  # tqdm's first frame, before set_description names the bar
    kind = next((k for needle, k in _BAR_KINDS if needle in frame.desc), "other")
    item = _BAR_ITEM.search(frame.desc)
    return ev.Progress(
        None,
        kind,
        frame.desc,
        frame.n,
        frame.total,
        frame.elapsed_s,
        frame.rate,
        item[1] if item else None,
        after,
    )


def _sizes(text: str) -> list[int] | None:
    m = _LIST.search(text)
    if m is None:
        return None
    return [int(x) for x in m[1].replace(",", " ").split()]


def _float(pattern: re.Pattern[str], text: str) -> float | None:
    m = pattern.search(text)
    return float(m[1]) if m else None
