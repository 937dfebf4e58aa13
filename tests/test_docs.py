"""The docs point at things that exist.

Every relative link resolves, and every function that the code map (docs/README.md, "Where
is the code for X") names is defined in the file it names.
"""

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
PKG = ROOT / "src" / "jointspace"
_TOP = ("examples", "benchmarks", "tests", "tools")
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _defined(path):
    """Top-level names a module defines (functions, classes, assignments)."""
    names = set()
    for n in ast.parse(path.read_text()).body:
        if isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, ast.Assign):
            names.update(t.id for t in n.targets if isinstance(t, ast.Name))
    return names


def test_relative_links_resolve():
    missing = []
    for doc in DOCS:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", doc.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (doc.parent / target).exists():
                missing.append(f"{doc.relative_to(ROOT)} -> {target}")
    assert missing == []


def test_code_map_names_exist_where_it_says():
    rows = [r for r in (ROOT / "docs" / "README.md").read_text().splitlines()
            if r.startswith("|") and ".py`" in r]
    assert len(rows) > 40
    wrong = []
    for row in rows:
        for cell in row.split("|"):
            files = re.findall(r"`([\w/]+\.py)`", cell)
            if not files:
                continue
            paths = [(ROOT if f.split("/")[0] in _TOP else PKG) / f for f in files]
            wrong += [f"{f}: no such file" for f, p in zip(files, paths) if not p.exists()]
            names = set().union(*(_defined(p) for p in paths if p.exists()))
            inside = re.findall(r"\(([^()]*)\)", cell)
            for name in re.findall(r"`(\w+)`", " ".join(inside)):
                if name not in names:
                    wrong.append(f"{', '.join(files)}: {name} not defined there")
    assert wrong == []
