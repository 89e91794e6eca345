# Sent over stdin to `sh -s -- WORD...` (one round trip, nothing installed on the host):
# find a Python for the program that follows (remote/discover.py appends the line that
# runs it with "$py"): python3 on PATH, else the interpreter of a running process whose
# command line holds one of the WORDs (a server's own).
py=$(command -v python3 2>/dev/null)
if [ -z "$py" ]; then
    # No python3 on PATH (a conda or venv only host): use a running server's own.
    for d in /proc/[0-9]*; do
        c=$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null)
        for w in "$@"; do
            case $c in
            *"$w"*)
                e=$(readlink "$d/exe" 2>/dev/null)
                case ${e##*/} in python*) py=$e; break 2 ;; esac ;;
            esac
        done
    done
fi
if [ -z "$py" ]; then
    echo '{"error": "no python3 on this host"}'
    exit 0
fi
