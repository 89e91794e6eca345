"""The host side, without installing anything there: the programs sent to a host
(host/, plain python3) and the clients here that build them (hostprogram.py), send
them and read their answers (discover, the log followers, gpustream)."""
