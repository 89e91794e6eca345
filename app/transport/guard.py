"""Wrap a streaming command so it dies with its channel.

OpenSSH sends no signal to a command without a pty when the channel or the
connection closes, and `process.terminate()` is refused for root logins before
OpenSSH 9.8 (docs/design/ssh.md). Only programs that write notice (EPIPE);
a quiet `tail` on a busy-less log, or anything blocked, would linger. So every
stream runs under a stdin watchdog: the channel's stdin is never written nor
closed by us, and when it reaches EOF (channel closed, connection dropped, sgwatch
killed) the watchdog kills the whole process group of the wrapper (sshd starts
each session with setsid, so the group is exactly what this channel started;
detached launches made their own session and are not touched).

The wrapper is POSIX sh run as `/bin/sh -c`, so the user's login shell (bash,
zsh, fish...) only has to parse one `exec` and a quoted word.
"""

from __future__ import annotations

import shlex

# fd 3 keeps the channel's stdin for the watchdog; the command gets /dev/null.
# When the command ends first, the watchdog subshell is killed; its `cat` stays
# until the channel closes, writes nothing and holds no output open.
_GUARD = """exec 3<&0 </dev/null
{{ cat >/dev/null <&3; kill -TERM 0; }} >/dev/null 2>&1 &
w=$!
exec 3<&-
{cmd}
s=$?
kill "$w" 2>/dev/null
exit "$s"
"""


def posix(script: str) -> str:
    """A command line that runs `script` with /bin/sh whatever the login shell is."""
    return "exec /bin/sh -c " + shlex.quote(script)


def guarded(cmd: str) -> str:
    """`cmd` (sh syntax) wrapped in the stdin watchdog, as a command line for exec."""
    return posix(_GUARD.format(cmd=cmd))
