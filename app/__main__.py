import sys


def main() -> int:
    try:
        from sgwatch.cli.main import main as run  # most of the start-up: the imports

        return run()
    except KeyboardInterrupt:  # Ctrl-C before the command took it: its status, no traceback
        from sgwatch.cli.exitcodes import INTERRUPTED

        return INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
