"""The programs sent to a host, as they run there: a plain python3 (>= 3.8, stdlib
only) with nothing of sgwatch installed. Each is built for sending by
remote/hostprogram.py (its shared modules inlined, its request filled in);
docs/design/host-programs.md."""
