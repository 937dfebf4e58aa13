"""`python -m jointspace …`: the `jointspace` command line (see `jointspace.cli`).

`python -m jointspace humanoid` prints a summary of the embedded humanoid (the README's main
job); `python -m jointspace simulate humanoid --seconds 2` simulates it.
"""

import sys

from jointspace.cli import main, summary

__all__ = ["main", "summary"]

if __name__ == "__main__":
    sys.exit(main())
