"""List the kernels Numba's cache holds more than one overload of, and how they differ.

    python tools/cache_overloads.py [CACHE_DIR]

Every cache index (`.nbi`) holds the argument types of the overloads compiled for one
function. Two overloads whose arguments differ only by a literal (`Literal[int](0)` against
`int64`) or an integer width (`int32` against `int64`) are the same machine code compiled
twice, each time with everything it inlines (docs/architecture.md, "Compile time"). The
listing names the function and, per differing argument position, the types seen there.

CACHE_DIR: where the index files are (default: NUMBA_CACHE_DIR if set, else the package's
`__pycache__` folders). Only the indexes of the current core (the tag in their names,
`_numba/cache.py`) are read.
"""

import argparse
import os
import pathlib
import pickle
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def _short(t):
    """A type's name, with the Model and Data structs (whose names list every field) cut."""
    s = str(t)
    for struct in ("Model", "Data"):
        if s.startswith(f"numba.{struct}StructType"):
            return struct
    return s[:60]


def overloads(folder, tag):
    """(function, [signature, …]) for every index of the core `tag` under folder."""
    for path in sorted(pathlib.Path(folder).rglob(f"*-{tag}.py*.nbi")):
        with open(path, "rb") as fh:
            pickle.load(fh)  # Numba's version
            data = fh.read()
        try:
            _, table = pickle.loads(data)
        except Exception:  # an index of types this process cannot rebuild: not ours to read
            continue
        yield path.name.split("-")[0], [key[0] for key in table]


def main(argv=None):
    """Print the functions with several overloads, most overloads first."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cache_dir", nargs="?", default=os.environ.get("NUMBA_CACHE_DIR"))
    args = ap.parse_args(argv)
    from jointspace._numba import cache

    folder = args.cache_dir or ROOT / "src" / "jointspace"
    rows = []
    for name, sigs in overloads(folder, cache._core_tag()):
        if len(sigs) < 2:
            continue
        width = max(len(s) for s in sigs)
        diffs = []
        for i in range(width):
            seen = sorted({_short(s[i]) if i < len(s) else "-" for s in sigs})
            if len(seen) > 1:
                diffs.append(f"arg {i}: {' | '.join(seen)}")
        rows.append((len(sigs), name, "; ".join(diffs) or "struct types differ"))
    for n, name, diff in sorted(rows, key=lambda r: (-r[0], r[1])):
        print(f"{n}  {name}  {diff}")
    print(f"{len(rows)} functions with more than one overload", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
