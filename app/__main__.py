import sys

from sgwatch.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
