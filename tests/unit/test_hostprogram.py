"""Programs sent to a host share stdlib-only modules with sgwatch, inlined when sent."""

import ast
import subprocess
import sys

import pytest

from sgwatch.control import restart
from sgwatch.core.hostprogram import inline
from sgwatch.engines.sglang import ENGINE as SGLANG
from sgwatch.engines.vllm import ENGINE as VLLM
from sgwatch.remote import logfollow, panefollow, streamfollow


def test_inline_replaces_the_shared_modules_imports_only():
    program = "import os\nfrom shared.mod import f\nfrom other import g\nf()\n"
    sent = inline(program, {"shared.mod": "def f():\n    pass\n"})
    assert sent == "import os\ndef f():\n    pass\nfrom other import g\nf()\n"


def imports_of(source: str) -> list[str]:
    return [
        n.module if isinstance(n, ast.ImportFrom) else a.name
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in n.names
    ]


SENT = {
    "sglang catalog": SGLANG.catalog_program(),
    "vllm catalog": VLLM.catalog_program(),
    "pane restart": restart._PANE,
    "service restart": restart._SERVICE,
    "log follower": logfollow._SOURCE,
    "stream follower": streamfollow._SOURCE,
    "pane follower": panefollow._SOURCE,
}


@pytest.mark.parametrize("name", SENT)
def test_a_program_as_sent_needs_nothing_of_sgwatch(name):
    source = SENT[name]
    assert not [m for m in imports_of(source) if m.startswith("sgwatch")]
    # Run without site-packages (nothing of sgwatch importable): it loads and defines
    # what it calls; `__name__` is not __main__, so it does not start its work.
    code = f"exec(compile({source!r}, {name!r}, 'exec'), {{'__name__': 'sent'}})"
    r = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
