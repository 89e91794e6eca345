"""How a person starts a server by hand so that it neither hangs the SSH channel nor dies
with it (docs/design/ssh.md, "A detached launch"): the tests start their servers this way.

    cd DIR || exit 1                       # its own line: `cd DIR && CMD &` backgrounds a
                                           # subshell that keeps the channel open
    true > LOG || exit 1                   # the log exists once the pid comes back, and a
                                           # log that cannot be written launches nothing
    VAR=... setsid nohup CMD > LOG 2>&1 < /dev/null &   # all three redirections, or
                                           # `run()` waits for the server to exit
    echo $!                                # = pid = pgid = sid of the server

Run it with `Transport.run` (no pty: over a pty the launched process dies with
the shell's SIGHUP). PYTHONUNBUFFERED=1 is set unless given, or a Python
server's log stays empty for minutes (its stdout is a file, so block-buffered).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping


def detached(argv: list[str], cwd: str, log: str, env: Mapping[str, str] | None = None) -> str:
    assigns = {"PYTHONUNBUFFERED": "1", **(env or {})}
    if bad := [k for k in assigns if not k.isidentifier()]:
        raise ValueError(f"not environment variable names: {bad}")
    prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in assigns.items())
    out = shlex.quote(log)
    return (
        f"cd {shlex.quote(cwd)} || exit 1\n"
        f"true > {out} || exit 1\n"
        f"{prefix} setsid nohup {shlex.join(argv)} > {out} 2>&1 < /dev/null &\n"
        "echo $!\n"
    )
