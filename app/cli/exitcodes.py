"""The one table of exit statuses: every command, the README and each --help use it."""

from __future__ import annotations

import argparse

OK = 0  # done: ready (wait), the stream ended (events), restarted and ready, replayed
FAILED = 1  # the server crashed, or the action failed (a bench request, a restart)
USAGE = 2  # bad usage or bad input: flags, the config file, a prompts file, an unreadable log
UNREACHABLE = 3  # the host (a fleet's Prometheus) cannot be reached: network, login, host key;
#                 the link ended
NO_SERVER = 4  # the host answers but has nothing to watch: no server (or not that --pid),
#               no log named, or a named log that never came; or (wait) the log of a server
#               that is gone, which ended without a crash
TIMED_OUT = 5  # --timeout passed first
REFUSED = 6  # refused before touching the server: preflight, no room for the log, not confirmed
AMBIGUOUS = 7  # several servers and nothing says which (--pid picks one), or, none
#               running, several logs of servers that are gone (--log picks one)
INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT

TABLE = (
    (OK, "ok: ready, done"),
    (FAILED, "the server crashed or the action failed"),
    (USAGE, "bad usage or input (flags, config, prompts file, log file)"),
    (UNREACHABLE, "host or fleet source unreachable (network, login, host key), link ended"),
    (NO_SERVER, "no server to watch: none runs (or in the fleet), no such --pid, no --log"),
    (TIMED_OUT, "timed out"),
    (REFUSED, "refused: preflight or room for the log failed, or not confirmed; server untouched"),
    (AMBIGUOUS, "several servers: pick one with --pid (a gone one's log: --log)"),
    (INTERRUPTED, "interrupted (Ctrl-C)"),
)


def epilog() -> str:
    """The table as each command's --help ends with it (with HelpFormatter)."""
    return "exit status:\n" + "\n".join(f"  {code:<4} {text}" for code, text in TABLE)


def add_command(sub: argparse._SubParsersAction, name: str, **kwargs) -> argparse.ArgumentParser:
    """A command's parser, whose --help ends with the table."""
    return sub.add_parser(name, epilog=epilog(), formatter_class=HelpFormatter, **kwargs)


class HelpFormatter(argparse.HelpFormatter):
    """Wraps prose as argparse does; keeps indented lines (the table's rows) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out = []
        for line in text.splitlines():
            kept = line.startswith(" ")
            out.append(indent + line if kept else super()._fill_text(line, width, indent))
        return "\n".join(out)
