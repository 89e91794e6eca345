"""What an engine parser emits: one event per meaningful log line.

Every event carries `ts`, the line's own timestamp as logged
("2026-01-01 10:00:00[.123]", or "10:00:00" when the log prints no date;
ISO-8601 with a space, which sorts as text) or None for untimed lines (tqdm
bars, bare tracebacks); the live session may stamp untimed lines with their
arrival time instead. The summary writes them with the `T` separator.
`rank` is the rank tag of the line's prefix ("TP0", "DP1 TP1") or None.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sgwatch.core.identity import RunIdentity

# Canonical warmup phases, in the order a healthy start goes through them.
STARTING = "starting"
LOADING_WEIGHTS = "loading_weights"
ALLOCATING_KV_CACHE = "allocating_kv_cache"
CAPTURING_GRAPHS = "capturing_graphs"
COMPILING = "compiling"
WARMING_UP = "warming_up"
WARMUP_PHASES = (
    STARTING,
    LOADING_WEIGHTS,
    ALLOCATING_KV_CACHE,
    CAPTURING_GRAPHS,
    COMPILING,
    WARMING_UP,
)
# How far into a warmup each phase is; capture and compilation alternate, so they
# share a rank.
PHASE_RANK = {
    STARTING: 0,
    LOADING_WEIGHTS: 1,
    ALLOCATING_KV_CACHE: 2,
    CAPTURING_GRAPHS: 3,
    COMPILING: 3,
    WARMING_UP: 4,
}
# States after warmup.
READY = "ready"
SERVING = "serving"
CRASHED = "crashed"
STOPPED = "stopped"
STATES = (*WARMUP_PHASES, READY, SERVING, CRASHED, STOPPED)


@dataclass(slots=True)
class RunStarted:
    """A new server run begins (args dump, entrypoint banner)."""

    ts: str | None
    reason: str
    # The server's settings, when dumped, in the engine's own names: read only by
    # that engine's functions (engines/base.py).
    args: dict[str, Any] | None = None
    version: str | None = None  # the engine's release, when the line states it
    identity: RunIdentity | None = None  # what the engine read from those settings


@dataclass(slots=True)
class PhaseSeen:
    """Evidence that the server is in `phase` (one of WARMUP_PHASES)."""

    ts: str | None
    rank: str | None
    phase: str
    what: str = ""


@dataclass(slots=True)
class WeightsLoaded:
    ts: str | None
    rank: str | None
    elapsed_s: float | None
    mem_usage_gb: float | None
    arch: str | None = None  # the model class it loaded: "Qwen3_5ForConditionalGeneration"


@dataclass(slots=True)
class KvCacheSized:
    ts: str | None
    rank: str | None
    tokens: int | None


@dataclass(slots=True)
class CaptureBegin:
    """A graph capture starts; `sizes` is its announced bs / num_tokens list."""

    ts: str | None
    rank: str | None
    kind: str
    sizes: list[int] | None = None


@dataclass(slots=True)
class CaptureSizes:
    """The bs / num_tokens list of a capture, announced on its own line."""

    ts: str | None
    rank: str | None
    kind: str
    sizes: list[int] | None


@dataclass(slots=True)
class CaptureEnd:
    ts: str | None
    rank: str | None
    kind: str
    elapsed_s: float | None
    mem_usage_gb: float | None = None  # GPU memory the graphs took


@dataclass(slots=True)
class Progress:
    """One tqdm frame. `kind` says what the bar measures: "weights", or a
    graph kind ("decode", "prefill", "piecewise", "compile")."""

    ts: str | None
    kind: str
    desc: str
    n: int | None
    total: int | None
    elapsed_s: float | None = None
    rate: str | None = None
    item: str | None = None  # current bs / num_tokens
    after: str | None = None  # the last log stamp before this untimed frame


@dataclass(slots=True)
class Capacity:
    """The scheduler's capacity line: warmup is nearly over."""

    ts: str | None
    max_total_num_tokens: int


@dataclass(slots=True)
class Ready:
    ts: str | None


@dataclass(slots=True)
class Batch:
    """A `Prefill batch` / `Decode batch` line. The generation rate and accept
    length are read at once; the other `key: value` fields only when asked for
    (this is the hot path: most lines of a serving log are batch lines)."""

    ts: str | None
    rank: str | None
    kind: str  # "prefill" | "decode"
    body: str = ""  # the ", "-separated fields after the label
    gen_tok_s: float | None = None
    accept_len: float | None = None

    @property
    def fields(self) -> dict[str, str]:
        out = {}
        for item in self.body.split(", "):
            key, sep, value = item.partition(": ")
            if sep:
                out[key.strip()] = value.strip().rstrip(",")
        return out

    def number(self, key: str) -> float | None:
        try:
            return float(self.fields[key])
        except (KeyError, ValueError):
            return None


@dataclass(slots=True)
class ServingRun:
    """Consecutive serving lines (decode and prefill batches, HTTP access
    lines), folded into one event.

    They are most of a serving log and change nothing but counters, so they
    are carried as the text the log holds: parsing costs a few string
    operations a line, and numbers are made only where a reader needs them.
    """

    lines: list[str]  # the newest decode lines with a rate (the tail of gen_buckets)
    stamp: Callable[[str], str]  # the log time of one of those lines
    rate: Callable[[str], str]  # the rate of one of those lines, as printed ("1234.56")
    # The decode lines' rates, each as its 0.1 tok/s bucket is printed ("1234.5"):
    # counted as they are (core/ratecounts.py), without a copy of each rate's text.
    gen_buckets: list[str]
    in_bucket: Callable[[str], list[str]]  # the run's rates, as printed, in one bucket
    accept_len: list[float]  # speculative decoding only: of the lines with a rate, or
    # (vLLM) of the run's SpecDecoding lines
    batches: int  # decode and prefill lines, with or without a rate
    requests: int  # access lines other than health checks
    first_batch_ts: str | None  # of the run's first decode or prefill line
    last_ts: str  # of the run's last line
    last_decode: Batch | None  # the newest decode line: running/queued/usage on demand


@dataclass(slots=True)
class Request:
    """An HTTP access line."""

    ts: str | None
    method: str
    path: str
    status: int | None
    health_check: bool = False  # a probe, not traffic


@dataclass(frozen=True, slots=True)
class Remedy:
    """A change of launch flags that the server's own message says avoids a crash."""

    advice: str  # in words: "add --some-flag"
    add: tuple[tuple[str, ...], ...] = ()  # flags to add, each as its words: ("--x",), ("--y", "4")
    drop: tuple[str, ...] = ()  # flags to take out of the command


@dataclass(slots=True)
class Crash:
    """A crash signature. `specific` marks an exception line: it beats
    generic signals (sigquit, "Scheduler hit an exception") as the summary."""

    ts: str | None
    rank: str | None
    summary: str
    line: str
    exception: str | None = None
    specific: bool = False
    exit_code: int | None = None
    # Where the server was, as a traceback's frames say (a WARMUP_PHASES name or
    # SERVING); None: the state's own phase stands.
    phase: str | None = None
    # The server said what failed and why: the traceback that follows is the same
    # failure, and its exception line does not replace this summary.
    explained: bool = False
    # The engine's remedy, given the run's resolved settings (its own names: only the
    # engine's function reads them); None: no flag change is known to avoid it.
    remedy: Callable[[Mapping[str, Any]], Remedy | None] | None = None


@dataclass(slots=True)
class Overridden:
    """The server runs a setting other than the one asked for, and says why."""

    ts: str | None
    setting: str  # the argument's name: "cudagraph_mode"
    effective: Any  # what it runs with
    requested: Any  # what it says was asked for, when it says
    reason: str  # the line that says so


@dataclass(slots=True)
class Resolved:
    """The server says what a setting resolved to: an override if the run asked for
    another (the state knows what was asked, so a parser needs no memory of it)."""

    ts: str | None
    setting: str
    effective: Any
    reason: str  # the line that says so


@dataclass(slots=True)
class Compiled:
    """torch.compile's account of itself: the graphs loaded from its cache ("hit") or
    compiled anew ("miss") in `seconds`, or (`total`) its whole time, cache unsaid."""

    ts: str | None
    rank: str | None
    cache: str | None  # "hit" | "miss" | None
    seconds: float | None
    total: bool = False


@dataclass(slots=True)
class StartupTiming:
    """The server's own account of how long start-up steps took (one line may say
    several), seconds by the engine's name for each: "load_weight", "cuda_graph.decode"."""

    ts: str | None
    steps: dict[str, float]
    whole: float | None = None  # its whole start-up, when one of the steps is that


@dataclass(slots=True)
class ServerStartup:
    """The server's own start-up figures as its HTTP API reports them once it is up
    (not a log line: the dashboard asks). `seconds`: its whole start-up by its own
    clock, None when it gives steps only; `source`: where it said so ("/metrics")."""

    seconds: float | None
    source: str
    steps: dict[str, float]


@dataclass(slots=True)
class Stopped:
    ts: str | None


Event = (
    RunStarted
    | PhaseSeen
    | WeightsLoaded
    | KvCacheSized
    | CaptureBegin
    | CaptureSizes
    | CaptureEnd
    | Progress
    | Capacity
    | Ready
    | Batch
    | ServingRun
    | Request
    | Crash
    | Overridden
    | Resolved
    | Compiled
    | StartupTiming
    | ServerStartup
    | Stopped
)

# Events that change only the serving counters (and move a fresh or ready run to
# serving): a run of them can be counted apart and added on (ServerState.extend).
SERVING_EVENTS = (Batch, ServingRun, Request)
