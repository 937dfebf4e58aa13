"""Real MJCF models as test data: the files shipped inside pinned dm-control and gymnasium wheels.

`real_model(dist, path)` returns the path of a file inside the wheel of `dist` at the version
pinned in WHEELS. The wheel is downloaded once, with `python -m pip download --no-deps` from the
running interpreter, into the user cache and unpacked beside it; later runs reuse both:

    $XDG_CACHE_HOME/jointspace-tests/ (~/.cache/jointspace-tests/ when XDG_CACHE_HOME is unset)
        wheels/dm_control-1.0.50-py3-none-any.whl     the downloaded wheel
        dm-control-1.0.50/dm_control/suite/...        its unpacked contents

The packages are never installed and jointspace never imports them: they are data for the tests.
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

import pytest

# exact versions, so that every run compares against the same files
WHEELS = {
    "dm-control": "1.0.50",
    "gymnasium": "1.4.0",
}


def cache_dir():
    """$XDG_CACHE_HOME/jointspace-tests, or ~/.cache/jointspace-tests."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # unset, empty or relative: the XDG default
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "jointspace-tests"


def real_model(dist, path):
    """The path of `path`, a file inside the pinned wheel of `dist`, downloading it on first use.

    Args:
        dist: a key of WHEELS (the distribution's name on PyPI).
        path: the file's path inside the wheel, e.g. "dm_control/suite/humanoid.xml".

    Returns:
        pathlib.Path of the unpacked file; the files beside it (includes, meshes) are there too.
    """
    version = WHEELS[dist]
    root = cache_dir() / f"{dist}-{version}"
    if not root.is_dir():
        _unpack(_wheel(dist, version), root)
    target = root / path
    assert target.is_file(), f"{dist}=={version} ships no {path} (unpacked in {root})"
    return target


def _wheel(dist, version):
    """The cached wheel of dist==version, downloaded with pip if it is not there yet."""
    wheels = cache_dir() / "wheels"
    pattern = f"{re.sub(r'[-_.]+', '_', dist).lower()}-{version}-*.whl"
    found = sorted(wheels.glob(pattern))
    if found:
        return found[0]
    wheels.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--disable-pip-version-check", f"{dist}=={version}"]
    # download into a scratch folder first: an interrupted download leaves no wheel behind
    with tempfile.TemporaryDirectory(dir=wheels) as tmp:
        r = subprocess.run([*cmd, "-d", tmp], capture_output=True, text=True)
        got = sorted(pathlib.Path(tmp).glob(pattern))
        if r.returncode != 0 or not got:
            pytest.fail(
                f"could not download the test data wheel {dist}=={version} "
                f"(pip exited {r.returncode}):\n{(r.stdout + r.stderr)[-2000:]}\n"
                f"Download it by hand, then run the tests again:\n"
                f"    python -m pip download --no-deps {dist}=={version} -d {wheels}",
                pytrace=False)
        os.replace(got[0], wheels / got[0].name)
    return wheels / got[0].name


def _unpack(wheel, root):
    """Unpack the wheel into root, which appears whole or not at all."""
    root.parent.mkdir(parents=True, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".unpacking-", dir=root.parent)
    try:
        with zipfile.ZipFile(wheel) as z:
            z.extractall(tmp)
        os.rename(tmp, root)
    except OSError:
        if not root.is_dir():  # not a concurrent run that unpacked it first
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
