"""Soak: the dashboard left open over SSH while its servers live through days.

Two hosts, each the test sshd in a PID namespace of its own (tests/integration/sshd.py)
behind a FaultProxy (tests/fault/proxy.py), each running one simulated server
launched detached as a user would: SGLang on `sg`, vLLM on `vl`, their clocks
compressed --speed times. `sgwatch sg vl` runs as the CLI runs it, with its real
terminal driver, in a tmux pane (bench/soak_app.py: it samples itself every
--every seconds and presses keys on a schedule). Meanwhile, from here:

- traffic: streaming requests, 4 at a time per server (a few hundred log lines a
  second in all, the SGLang server logging every 4th decode step);
- every --event-every seconds per host (the hosts staggered), the next of: a restart
  with a flag edit (`sgwatch restart HOST --set ... --yes`), a copytruncate rotation,
  a plain restart (kill, launch again on the same log), a rename rotation with a
  restart onto a new log, a crash (a launch that runs out of memory in its warmup,
  then a good one); older rotated logs are deleted as logrotate would;
- every --drop-every seconds both links reset (RST);
- `sgwatch events HOST --json` running throughout (bench/soak_follower.py: its C heap
  sampled from inside, to OUT/follower-HOST.jsonl), `sgwatch wait HOST` run again and
  again, per host;
- every --every seconds: the processes sgwatch keeps on each host, the bytes of
  sgwatch's own files (its state and cache folders), the followers' RSS and fds,
  the log lines written.

Samples go to OUT/app.jsonl (the dashboard) and OUT/host.jsonl; the summary (RSS
slope after --warmup and after the first cycle of events, RSS fitted against the log
of the time, ranges of the rest, the CPU share, key p95 at the start and the end) to
OUT/summary.json and stdout.

    python bench/soak.py --minutes 30 --out /tmp/soak-a

SIGTERM or SIGINT ends a run early, cleaning up and summing up as at its end (started
as a shell's background job, the bench has SIGINT ignored: send SIGTERM).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import math
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from history_reads import fill

from sgwatch.sim.common.nvidia_smi import install
from sgwatch.transport.ssh import SshTransport
from tests.fault.proxy import FaultProxy
from tests.integration.detached import detached
from tests.integration.sshd import SshdServer, alive, free_port

ROOT = Path(__file__).resolve().parents[1]
SIM = [sys.executable, "-m", "sgwatch.sim"]
SGWATCH = [sys.executable, "-m", "sgwatch"]
FOLLOWER = ROOT / "bench" / "soak_follower.py"  # `sgwatch events`, reading its own heap
KINDS = {
    "sg": {
        "argv": [
            "--model-path",
            "Qwen/Qwen3-8B",
            "--cuda-graph-max-bs",
            "16",
            "--decode-log-interval",
            "4",
        ],
        "crash": [
            "--model-path",
            "meta-llama/Llama-3.1-70B-Instruct",
            "--tp",
            "2",
            "--mem-fraction-static",
            "0.4",
            "--sim-format",
            "0.5.23",
        ],
        "flags": ["decode-log-interval=3", "decode-log-interval=4"],
        "path": "/generate",
    },
    "vl": {
        "argv": ["vllm", "serve", "Qwen/Qwen3-8B", "--max-num-seqs", "16"],
        "crash": ["vllm", "serve", "Qwen/Qwen3-8B", "--gpu-memory-utilization", "0.99"],
        "flags": ["max-num-seqs=32", "max-num-seqs=16"],
        "path": "/v1/chat/completions",
    },
}
EVENTS = ("flag", "copytruncate", "relaunch", "rename", "crash")
CLIENTS = 4  # requests in flight per server
KEEP_ROTATED = 2


@dataclass
class Host:
    """One simulated GPU box: its sshd, the proxy sgwatch reaches it through, its server."""

    name: str
    srv: SshdServer
    proxy: FaultProxy
    folder: Path
    port: int = field(default_factory=free_port)
    events: int = 0
    rotated: int = 0

    @property
    def log(self) -> Path:
        return self.folder / "server.log"

    def launch(self, argv: list[str], speed: float) -> None:
        full = [*SIM, *argv, "--host", "127.0.0.1", "--port", str(self.port)]
        full += ["--sim-speed", f"{speed:g}"]
        env = {"SGWATCH_SIM_STATE": str(self.folder / "gpu-state")}
        asyncio.run(self._run(detached(full, str(self.folder), str(self.log), env)))

    async def _run(self, script: str) -> str:
        t = SshTransport("gpu129", config=[str(self.srv.ssh_config)])
        await t.connect()
        try:
            return (await t.run(script, timeout=20)).stdout
        finally:
            await t.close()

    def servers(self) -> list[int]:
        """The simulated servers running on the host, by their pids out here."""
        return [pid for pid, cmd in self.srv.remote_processes() if _simulator(cmd)]

    def others(self) -> list[str]:
        """What else runs on the host: what sgwatch's sessions keep there (a server's
        helper processes, named as SGLang's and vLLM's are, left out)."""
        return [cmd for _, cmd in self.srv.remote_processes() if not _server_part(cmd)]

    def kill_servers(self) -> None:
        for pid in self.servers():
            with contextlib.suppress(OSError):
                os.killpg(os.getpgid(pid), signal.SIGKILL)
        deadline = time.monotonic() + 10
        while self.servers() and time.monotonic() < deadline:
            time.sleep(0.1)

    def rotate_name(self) -> Path:
        self.rotated += 1
        kept = self.folder / f"server.log.rot{self.rotated}"
        for old in sorted(self.folder.glob("server.log.*"), key=os.path.getmtime)[:-KEEP_ROTATED]:
            old.unlink()
        return kept


def _simulator(cmd: str) -> bool:
    # the nvidia-smi stand-in is a module of the simulator too, but sgwatch runs it
    return "sgwatch.sim" in cmd and "common.nvidia_smi" not in cmd


def _server_part(cmd: str) -> bool:
    return _simulator(cmd) or cmd.startswith(("sglang::", "VLLM::"))


def make_host(name: str, tmp: Path) -> Host:
    srv = SshdServer(tmp / f"sshd-{name}").start()
    proxy = FaultProxy(srv.gpu_port).start()
    folder = tmp / f"run-{name}"
    folder.mkdir()
    install(srv.gpu_bin, folder / "gpu-state")
    return Host(name, srv, proxy, folder)


def user_home(home: Path, hosts: list[Host]) -> dict[str, str]:
    """A HOME whose ~/.ssh/config names each host through its proxy, known hosts and all,
    and sgwatch's state and cache folders in it (measured)."""
    (home / ".ssh").mkdir(parents=True)
    config, known = [], []
    for h in hosts:
        kind, blob = h.srv.host_key.with_suffix(".pub").read_text().split()[:2]
        known.append(f"[127.0.0.1]:{h.proxy.port} {kind} {blob}\n")
        config.append(
            f"Host {h.name}\n    HostName 127.0.0.1\n    Port {h.proxy.port}\n"
            f"    User {h.srv.user}\n    IdentityFile {h.srv.client_key}\n"
            "    IdentitiesOnly yes\n    ServerAliveInterval 2\n    ServerAliveCountMax 3\n"
            "    ConnectTimeout 5\n"
        )
    (home / ".ssh" / "config").write_text("\n".join(config))
    (home / ".ssh" / "known_hosts").write_text("".join(known))
    env = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK",)}
    return {
        **env,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "PYTHONPATH": str(ROOT),
    }


def full_history(state: Path, h: Host) -> None:
    """The host's restart history at its bound: earlier runs of its command that reached
    ready, as days of restarts every few minutes leave it."""
    own = KINDS[h.name]["argv"]
    model = own[own.index("--model-path") + 1] if "--model-path" in own else own[2]
    argv = [*SIM, *own, "--host", "127.0.0.1", "--port", str(h.port)]
    runs = fill(state / "sgwatch" / "history" / f"{h.name}.jsonl", 50_000, argv, {"model": model})
    print(f"{h.name}: history of {runs} runs", flush=True)


def traffic(h: Host, stop: threading.Event) -> None:
    """One client: a streaming request after another while the server answers."""
    n = 0
    while not stop.is_set():
        n += 1
        body = {"stream": True}
        if h.name == "vl":
            body |= {"messages": [{"role": "user", "content": f"Count to {n}."}]}
            body["max_tokens"] = 200 + 50 * (n % 5)
        else:
            body |= {"text": f"Count to {n}.", "sampling_params": {"max_new_tokens": 200}}
        try:
            conn = http.client.HTTPConnection("127.0.0.1", h.port, timeout=60)
            conn.request("POST", KINDS[h.name]["path"], json.dumps(body))
            conn.getresponse().read()
            conn.close()
        except (OSError, http.client.HTTPException):  # a restart or crash cut it
            stop.wait(1.0)


def host_event(h: Host, env: dict[str, str], speed: float, log: list[dict]) -> None:
    what = EVENTS[h.events % len(EVENTS)]
    rec: dict = {"host": h.name, "event": what, "at": time.time()}
    t0 = time.monotonic()
    try:
        one_event(h, what, env, speed, rec)
    except Exception as e:  # recorded, and the soak goes on
        rec["error"] = repr(e)
    h.events += 1
    rec["took_s"] = round(time.monotonic() - t0, 1)
    log.append(rec)


def one_event(h: Host, what: str, env: dict[str, str], speed: float, rec: dict) -> None:
    kind = KINDS[h.name]
    t0 = time.monotonic()
    if what == "flag":
        flag = kind["flags"][(h.events // len(EVENTS)) % 2]
        r = subprocess.run(
            [*SGWATCH, "restart", h.name, "--set", flag, "--yes", "--timeout", "180"],
            env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        rec |= {"flag": flag, "status": r.returncode, "err": r.stderr[-300:]}
        kind["argv"] = restarted_argv(h) or kind["argv"]
    elif what == "copytruncate":
        shutil.copyfile(h.log, h.rotate_name())
        os.truncate(h.log, 0)
    elif what == "relaunch":
        h.kill_servers()
        h.launch(kind["argv"], speed)
    elif what == "rename":
        os.rename(h.log, h.rotate_name())
        h.kill_servers()
        h.launch(kind["argv"], speed)
    elif what == "crash":
        h.kill_servers()
        h.launch(kind["crash"], speed)
        deadline = time.monotonic() + 60
        while h.servers() and time.monotonic() < deadline:
            time.sleep(0.5)
        rec["crashed_in_s"] = round(time.monotonic() - t0, 1)
        h.kill_servers()
        h.launch(kind["argv"], speed)


def restarted_argv(h: Host) -> list[str] | None:
    """The running server's arguments (after a flag edit), less what launch() adds."""
    for pid in h.servers():
        with contextlib.suppress(OSError):
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]
        if "sgwatch.sim" not in argv:
            continue  # a shell on its way to it, or gone
        argv = argv[argv.index("sgwatch.sim") + 1 :]
        for flag in ("--host", "--port", "--sim-speed"):
            if flag in argv:
                i = argv.index(flag)
                del argv[i : i + 2]
        return argv
    return None


class LineCounter:
    """Lines written to a host's log since the last call, across truncations and renames."""

    def __init__(self, log: Path) -> None:
        self.log, self.ino, self.pos = log, 0, 0

    def new_lines(self) -> int:
        try:
            st = self.log.stat()
        except FileNotFoundError:
            return 0
        if st.st_ino != self.ino or st.st_size < self.pos:
            self.ino, self.pos = st.st_ino, 0
        with self.log.open("rb") as f:
            f.seek(self.pos)
            data = f.read()
        self.pos += len(data)
        return data.count(b"\n")


def tree_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def proc_figures(pid: int) -> dict[str, int]:
    try:
        rss = next(
            int(line.split()[1])
            for line in Path(f"/proc/{pid}/status").read_text().splitlines()
            if line.startswith("VmRSS")
        )
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        return {"rss_kb": rss, "heap_kb": heap_kb(pid), "fds": fds}
    except (OSError, StopIteration):
        return {}


def heap_kb(pid: int) -> int:
    """The resident KiB of a process's C heap: a follower's, beside the dashboard's own."""
    with open(f"/proc/{pid}/smaps") as smaps:
        lines = iter(smaps)
        for line in lines:
            if line.rstrip().endswith("[heap]"):
                return next(int(x.split()[1]) for x in lines if x.startswith("Rss:"))
    return 0


def default_sigint() -> None:
    """A child's SIGINT as the default, whatever this process inherited: started as a
    shell's background job (`nohup ... &`) the bench has SIGINT ignored, and so would
    the followers it stops with SIGINT."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


WAIT_S = 240  # each `wait`'s --timeout
HUNG_S = WAIT_S + 60  # a `wait` still running then has not ended at its timeout


def waiter(h: Host, env: dict[str, str], stop: threading.Event, out: list[dict]) -> None:
    """`sgwatch wait HOST` again and again: each run's status and time; one still
    running HUNG_S after it started is marked hung and stopped with SIGINT, one the
    bench's end stopped so is marked cut (not a wait that failed)."""
    while not stop.is_set():
        at, t0, hung, cut = time.time(), time.monotonic(), False, False
        with subprocess.Popen(
            [*SGWATCH, "wait", h.name, "--timeout", str(WAIT_S), "--quiet"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            stdin=subprocess.DEVNULL, preexec_fn=default_sigint,
        ) as p:  # fmt: skip
            while p.poll() is None and not stop.is_set() and not hung:
                time.sleep(0.2)
                hung = time.monotonic() - t0 > HUNG_S
            if p.poll() is None:
                cut = not hung
                p.send_signal(signal.SIGINT)
            try:
                _, err = p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                _, err = p.communicate()
        took = round(time.monotonic() - t0, 1)
        rec = {"host": h.name, "at": at, "status": p.returncode, "s": took}
        if hung:
            rec["hung"] = True
        elif cut:
            rec["cut"] = True
        if p.returncode:
            rec["err"] = err[-200:]
        out.append(rec)  # whole: the other host's waiter appends to the same list
        stop.wait(15)


def dashboard(env: dict[str, str], out: Path, socket: str, hosts: list[Host]) -> int:
    """`sgwatch sg vl` in a tmux pane (140x45); returns its pid."""
    script = out / "dashboard.sh"
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
    names = " ".join(h.name for h in hosts)
    script.write_text(
        f"{exports}cd {shlex.quote(str(ROOT))}\n"
        f"exec {shlex.quote(sys.executable)} bench/soak_app.py {names} --no-bell\n"
    )
    subprocess.run(
        ["tmux", "-L", socket, "new", "-d", "-x", "140", "-y", "45", "sh", str(script)],
        check=True,
    )
    # keep the pane once the dashboard ends, so its last screen (a traceback) can be read
    subprocess.run(["tmux", "-L", socket, "set", "-g", "remain-on-exit", "on"], check=True)
    time.sleep(1)
    pane = subprocess.run(
        ["tmux", "-L", socket, "list-panes", "-F", "#{pane_pid}"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    return int(pane[0])


def wait_gone(pid: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while pid and alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)


def slope_mb_h(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, KiB) in MB per hour."""
    if len(points) < 2:
        return 0.0
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs) or 1.0
    return sum((x - mx) * (y - my) for x, y in points) / den * 3600 / 1024


def log_fit(points: list[tuple[float, float]]) -> dict | None:
    """RSS (KiB) against the log of the time (s): a high-water mark raised by ever rarer,
    higher peaks grows by about the same amount each time the run's length doubles, a
    leak by the same amount each hour. Gives the MB a doubling adds, and the root mean
    square misfit of this fit and of a straight line (the lower fits better), and what
    the fit predicts for a day and a week (an extrapolation: the shape assumed to hold)."""
    if len(points) < 3:
        return None
    ts, mbs = [t for t, _ in points], [kb / 1024 for _, kb in points]
    logs = [math.log(t) for t in ts]
    on_log = statistics.linear_regression(logs, mbs)
    on_line = statistics.linear_regression(ts, mbs)

    def rms(fit, xs: list[float]) -> float:
        errors = [y - (fit.intercept + fit.slope * x) for x, y in zip(xs, mbs, strict=True)]
        return round(math.sqrt(statistics.fmean(e * e for e in errors)), 2)

    return {
        "mb_per_doubling": round(on_log.slope * math.log(2), 2),
        "misfit_mb_log_line": [rms(on_log, logs), rms(on_line, ts)],
        "day_week_mb": [
            round(on_log.intercept + on_log.slope * math.log(s), 1) for s in (86_400, 604_800)
        ],
    }


def p95(xs: list[float]) -> float | None:
    """The nearest rank: of two pauses, the longer (the floor of 0.95 * (n - 1) was the shorter)."""
    return sorted(xs)[math.ceil(0.95 * len(xs)) - 1] if xs else None


def first_cycle_s(out: Path, hosts: int) -> float | None:
    """Seconds from the start until every kind of event (each flag edit) had ended once on
    every host: what a dashboard meets for the first time (code first run, its objects
    first built) is behind it then. None if the run ended before."""
    doc = json.loads((out / "events.json").read_text())
    ends: dict[tuple, float] = {}
    for e in doc["events"]:
        ends.setdefault((e["host"], e["event"], e.get("flag")), e["at"] + e["took_s"])
    if len(ends) < hosts * (len(EVENTS) + 1):  # a flag edit sets one of two flags in turn
        return None
    return max(ends.values()) - doc["started_at"]


def summarize(out: Path, warmup: float) -> dict:
    app = [json.loads(x) for x in (out / "app.jsonl").read_text().splitlines()]
    host = [json.loads(x) for x in (out / "host.jsonl").read_text().splitlines()]
    after = [s for s in app if s["t"] >= warmup]
    late = [s for s in host if s["t"] >= warmup]

    def span(rows: list[dict], key: str) -> list:
        vals = [r[key] for r in rows if key in r]
        return [min(vals), max(vals)] if vals else []

    keys = [(s["t"], k) for s in after for k in s["keys_ms"]]
    full = [ms for s in after[1:] for ms in s.get("full_gc_ms", [])]  # since after[0]
    end = after[-1]["t"] if after else 0
    cycle = first_cycle_s(out, len(KINDS))
    return {
        "minutes": round(end / 60, 1),
        # Python's arenas are counted only while its own small-object allocator runs
        "allocator": "pymalloc" if any(s.get("alloc_kb", {}).get("py_arenas") for s in app)
        else "malloc",
        "rss_mb_at_warmup_and_end": [round(after[0]["rss_kb"] / 1024, 1),
                                     round(after[-1]["rss_kb"] / 1024, 1)] if after else [],
        "rss_slope_mb_h": round(slope_mb_h([(s["t"], s["rss_kb"]) for s in after]), 2),
        "rss_slope_last_half_mb_h": round(
            slope_mb_h([(s["t"], s["rss_kb"]) for s in after[len(after) // 2 :]]), 2
        ),
        # a ceiling shows as windows whose slopes fall towards 0, a leak as a steady one
        "rss_slope_by_half_hour_mb_h": [
            round(slope_mb_h([(s["t"], s["rss_kb"]) for s in after if w <= s["t"] < w + 1800]), 1)
            for w in range(int(warmup), int(end), 1800)
            if end - w >= 900  # a window of at least 15 minutes
        ],
        "rss_log_fit": log_fit([(s["t"], s["rss_kb"]) for s in after]),
        "first_cycle_of_events_ended_min": None if cycle is None else round(cycle / 60, 1),
        "rss_slope_after_first_cycle_mb_h": None if cycle is None else round(
            slope_mb_h([(s["t"], s["rss_kb"]) for s in app if s["t"] >= cycle]), 2
        ),
        "python_arenas_and_used_mib_at_warmup_and_end": [
            [s["alloc_kb"]["py_arenas"], round(s["alloc_kb"]["py_used"] / 1024, 1)]
            for s in (after[0], after[-1]) if "alloc_kb" in s
        ] if after else [],
        **{k: span(after, k) for k in ("fds", "threads", "tasks", "widgets", "dom_nodes")},
        "gc_objects": span(after, "gc_objects"),
        # collections per generation, Python's own with the sampler's full passes
        "gc_passes_per_min": [
            round((b - a) * 60 / max(1, end - after[0]["t"]), 1)
            for a, b in zip(after[0]["gc_passes"], after[-1]["gc_passes"], strict=True)
        ] if after and "gc_passes" in after[0] else None,
        "full_gc": {  # the app's full collections (bench/soak_app.py)
            "per_min": round(len(full) * 60 / max(1, end - after[0]["t"]), 1),
            "pause_ms_p50_p95_max": [statistics.median(full), p95(full), max(full)],
        } if full else None,
        "cpu_pct_after_warmup": round(
            100 * (after[-1]["cpu_s"] - after[0]["cpu_s"]) / max(1, end - after[0]["t"]), 1
        ) if after and "cpu_s" in after[0] else None,
        "key_p95_ms_first_and_last_5min": [
            p95([k for t, k in keys if t < warmup + 300]),
            p95([k for t, k in keys if t >= end - 300]),
        ],
        "host_processes_of_sgwatch": {
            h: span([{"n": r["others"][h]} for r in late], "n") for h in ("sg", "vl")
        },
        "sgwatch_files_bytes": span(late, "files_bytes"),
        "log_lines_per_s": round(
            sum(r["lines"] for r in late) / max(1, (late[-1]["t"] - late[0]["t"]) if late else 1)
        ),
    }  # fmt: skip


@dataclass
class Diary:
    """What the bench did, for the summary and bench/soak_peaks.py (OUT/events.json): the
    hosts' events (each appended once ended), the `wait` runs, the link drops."""

    path: Path
    started_at: float = 0.0
    events: list[dict] = field(default_factory=list)
    waits: list[dict] = field(default_factory=list)
    drops: list[float] = field(default_factory=list)

    def save(self) -> None:
        doc = {"started_at": self.started_at, "events": list(self.events)}
        doc |= {"waits": list(self.waits), "drops": list(self.drops)}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc))
        tmp.replace(self.path)


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # the run's cleanup (its finally) stops what it started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--speed", type=float, default=25, help="simulated seconds per second")
    ap.add_argument("--every", type=float, default=60, help="seconds between samples")
    ap.add_argument("--warmup", type=float, default=300, help="seconds before the fit")
    ap.add_argument("--event-every", type=float, default=180, help="seconds, per host")
    ap.add_argument("--drop-every", type=float, default=120, help="seconds")
    ap.add_argument(
        "--trace", type=int, default=0, metavar="FRAMES", help="tracemalloc in the dashboard"
    )
    ap.add_argument("--garbage", action="store_true", help="name the cyclic garbage")
    ap.add_argument(
        "--lean",
        action="store_true",
        help="sample without the census (no full collection, no walk of the heap)",
    )
    ap.add_argument(
        "--keep-memos", action="store_true", help="never empty Textual's and Rich's caches"
    )
    ap.add_argument(
        "--strip-caches", action="store_true", help="Textual's strips with their caches"
    )
    ap.add_argument(
        "--no-keys", action="store_true", help="a host's tab chosen, then no key pressed"
    )
    ap.add_argument(
        "--keys-faster", type=float, default=1, metavar="N", help="the keys N times as often"
    )
    ap.add_argument(
        "--history-full",
        action="store_true",
        help="each host's restart history starts at its bound (days of restarts)",
    )
    ap.add_argument(
        "--map-alone-from",
        type=int,
        default=0,
        metavar="BYTES",
        help="the C library maps blocks of BYTES and more alone (ui/heap.py's otherwise)",
    )
    ap.add_argument(
        "--ssh-window",
        type=int,
        default=0,
        metavar="BYTES",
        help="the dashboard's SSH channels buffer at most BYTES (asyncssh's 2 MiB otherwise)",
    )
    ap.add_argument(
        "--off",
        default="",
        metavar="STEPS",
        help="the dashboard's steps left out: metrics, liveness, history, writer (comma-separated)",
    )
    ap.add_argument(
        "--heap-walk", action="store_true", help="name the blocks beside the C heap's holes"
    )
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, _interrupted)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    stop = threading.Event()
    diary = Diary(out / "events.json")
    socket = f"soak-{os.getpid()}"
    with tempfile.TemporaryDirectory(prefix="sgwatch-soak-", ignore_cleanup_errors=True) as tmpdir:
        tmp = Path(tmpdir)
        hosts = [make_host(name, tmp) for name in KINDS]
        followers: list[subprocess.Popen] = []
        pid = 0  # the dashboard's
        ended_early = False
        stuck: list[str] = []
        diary.started_at = time.time()
        try:
            for h in hosts:
                h.launch(KINDS[h.name]["argv"], args.speed)
            env = user_home(tmp / "home", hosts)
            if args.history_full:
                for h in hosts:
                    full_history(Path(env["XDG_STATE_HOME"]), h)
            env |= {"SOAK_SAMPLES": str(out / "app.jsonl"), "SOAK_EVERY": str(args.every)}
            env |= {"SOAK_ARENAS": str(out / "arenas.jsonl")}
            env |= {"SOAK_WARMUP": str(args.warmup), "SOAK_TRACE": str(args.trace)}
            env |= {"SOAK_GARBAGE": "1" if args.garbage else "0"}
            env |= {"SOAK_LEAN": "1" if args.lean else "0"}
            env |= {"SOAK_KEEP_MEMOS": "1" if args.keep_memos else "0"}
            env |= {"SOAK_STRIP_CACHES": "1" if args.strip_caches else "0"}
            env |= {"SOAK_KEYS": "0" if args.no_keys else "1"}
            env |= {"SOAK_KEYS_FASTER": str(args.keys_faster)}
            env |= {"SOAK_MAP_ALONE_FROM": str(args.map_alone_from)}
            env |= {"SOAK_SSH_WINDOW": str(args.ssh_window), "SOAK_OFF": args.off}
            env |= {"SOAK_HEAP_WALK": "1" if args.heap_walk else "0"}
            for h in hosts:
                for _ in range(CLIENTS):
                    threading.Thread(target=traffic, args=(h, stop), daemon=True).start()
                waiting = threading.Thread(target=waiter, args=(h, env, stop, diary.waits))
                waiting.daemon = True
                waiting.start()
                samples = {"SOAK_FOLLOWER_SAMPLES": str(out / f"follower-{h.name}.jsonl")}
                followers.append(
                    subprocess.Popen(
                        [sys.executable, str(FOLLOWER), "events", h.name, "--json"],
                        env=env | samples,
                        stdout=(out / f"events-{h.name}.jsonl").open("w"),
                        stderr=(out / f"events-{h.name}.err").open("w"),
                        stdin=subprocess.DEVNULL,
                        preexec_fn=default_sigint,
                    )
                )
            pid = dashboard(env, out, socket, hosts)
            diary.started_at = time.time()  # the dashboard's samples count from about here
            try:
                run(args, out, hosts, env, pid, followers, diary)
            except KeyboardInterrupt:  # ended early: cleaned up and summed up all the same
                ended_early = True
        finally:
            stop.set()
            subprocess.run(["tmux", "-L", socket, "capture-pane", "-p"],
                           stdout=(out / "screen.txt").open("w"))  # fmt: skip
            subprocess.run(["tmux", "-L", socket, "send-keys", "q"])
            wait_gone(pid, 15)
            for p in followers:
                p.send_signal(signal.SIGINT)
            stuck, by = [], time.monotonic() + 15
            for p in followers:  # one that outlived its SIGINT is a finding, then killed
                try:
                    p.wait(max(0.0, by - time.monotonic()))
                except subprocess.TimeoutExpired:
                    stuck.append(" ".join(map(str, p.args[-3:])))
                    p.kill()
                    p.wait()
            subprocess.run(["tmux", "-L", socket, "kill-server"], stderr=subprocess.DEVNULL)
            quit_at, deadline = time.monotonic(), time.monotonic() + 30
            while any(h.others() for h in hosts) and time.monotonic() < deadline:
                time.sleep(0.2)
            gone_s = round(time.monotonic() - quit_at, 1)
            left = {h.name: [cmd[:80] for cmd in h.others()] for h in hosts}
            for h in hosts:
                h.kill_servers()
                h.srv.kill_remote_processes()
                h.srv.stop()
                h.proxy.stop()
            diary.save()
    summary = summarize(out, args.warmup)
    summary["ended_early"] = ended_early
    summary["followers_alive_15s_after_sigint"] = stuck
    summary["left_on_hosts_30s_after_quit"] = left
    summary["host_processes_gone_after_quit_s"] = gone_s
    summary["events"] = len(diary.events)
    failed = [e for e in diary.events if e.get("status") or e.get("error")]
    summary["event_failures"] = failed
    summary["waits"] = {
        "runs": len(diary.waits),
        "not_ok": [w for w in diary.waits if w["status"] and not w.get("cut")],
        "cut": sum(1 for w in diary.waits if w.get("cut")),
        "hung": sum(1 for w in diary.waits if w.get("hung")),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))


def run(args, out: Path, hosts: list[Host], env, pid: int, followers, diary: Diary) -> None:
    busy: dict[str, threading.Thread] = {}
    try:
        schedule(args, out, hosts, env, pid, followers, diary, busy)
    finally:
        # an event under way ends first (a flag restart: up to its --timeout), also when
        # the run is ended early, or its own sgwatch would still be at work on a host
        # when the quit's leftovers are counted
        for t in busy.values():
            t.join(timeout=300)


def schedule(args, out: Path, hosts: list[Host], env, pid: int, followers, diary, busy) -> None:
    """Link resets, events and samples on their schedules until the run's end."""
    counters = {h.name: LineCounter(h.log) for h in hosts}
    t0 = time.monotonic()
    next_sample, next_drop = args.every, args.drop_every
    next_event = {h.name: args.event_every * (1 + i / len(hosts)) for i, h in enumerate(hosts)}
    with (out / "host.jsonl").open("a") as samples:
        while (now := time.monotonic() - t0) < args.minutes * 60:
            if not alive(pid):
                raise RuntimeError("the dashboard ended (its last screen: screen.txt)")
            if now >= next_drop:
                next_drop += args.drop_every
                diary.drops.append(time.time())
                for h in hosts:
                    h.proxy.reset()
            for h in hosts:
                if now >= next_event[h.name] and not (h.name in busy and busy[h.name].is_alive()):
                    next_event[h.name] += args.event_every
                    busy[h.name] = threading.Thread(
                        target=host_event, args=(h, env, args.speed, diary.events), daemon=True
                    )
                    busy[h.name].start()
            if now >= next_sample:
                next_sample += args.every
                rec = {
                    "t": round(now),
                    "others": {h.name: len(h.others()) for h in hosts},
                    "servers": {h.name: len(h.servers()) for h in hosts},
                    "files_bytes": tree_bytes(Path(env["HOME"]) / ".state")
                    + tree_bytes(Path(env["HOME"]) / ".cache"),
                    "lines": sum(c.new_lines() for c in counters.values()),
                    "followers": [proc_figures(p.pid) for p in followers],
                    "load": os.getloadavg()[0],
                }
                samples.write(json.dumps(rec) + "\n")
                samples.flush()
                diary.save()  # so far: bench/soak_peaks.py can read a run under way
            time.sleep(0.5)


if __name__ == "__main__":
    main()
