"""``python -m flbounds`` is the ``flbounds`` command."""

import sys

from flbounds.cli import main

if __name__ == "__main__":
    sys.exit(main())
