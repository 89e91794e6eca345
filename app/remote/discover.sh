# Sent over stdin to `sh -s` (one round trip, nothing installed on the host):
# find a Python, then run the discovery program (host_discover.py, inlined below).
py=$(command -v python3 2>/dev/null)
if [ -z "$py" ]; then
    # No python3 on PATH (a conda or venv only host): use a running server's own.
    for d in /proc/[0-9]*; do
        case $(tr '\0' ' ' <"$d/cmdline" 2>/dev/null) in
        @WORDS@)
            e=$(readlink "$d/exe" 2>/dev/null)
            case ${e##*/} in python*) py=$e; break ;; esac ;;
        esac
    done
fi
if [ -z "$py" ]; then
    echo '{"error": "no python3 on this host"}'
    exit 0
fi
exec "$py" - <<'SGWATCH_END_OF_PROGRAM'
@PROGRAM@
SGWATCH_END_OF_PROGRAM
