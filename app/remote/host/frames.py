"""The frames the follower programs sent to a host write on stdout (stdlib only, Python
>= 3.8, no `from __future__`): a type byte, a 4-byte big-endian length, the payload; an
event ("E") is a JSON object. A program imports these as sgwatch would and is sent with
this text in place of that import (remote/hostprogram.py)."""

import json
import os
import struct


def emit(kind, payload):
    view = memoryview(struct.pack(">cI", kind, len(payload)) + payload)
    while view:
        view = view[os.write(1, view) :]


def event(**fields):
    emit(b"E", json.dumps(fields).encode())
