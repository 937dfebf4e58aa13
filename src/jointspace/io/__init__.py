"""Loading models: MJCF, URDF, or a `ModelSpec` built in Python.

`load(path)` dispatches on the file extension (.xml → MJCF, .urdf → URDF) and, for other
extensions, on the document's root element (<mujoco> or <robot>).
"""

import os
import re

from jointspace.errors import ModelError
from jointspace.io.compile import compile_model
from jointspace.io.spec import ModelSpec

_FORMATS = ("mjcf", "urdf")


def _sniff(text, where):
    m = re.search(r"<\s*(mujoco|robot)\b", text)
    if not m:
        raise ModelError(f"{where}: cannot tell the format: the root element is neither <mujoco> "
                         "(MJCF) nor <robot> (URDF); pass format='mjcf' or format='urdf'")
    return "mjcf" if m.group(1) == "mujoco" else "urdf"


def load(path, *, format=None, **kwargs):
    """Load and compile a model file (MJCF .xml or URDF .urdf).

    Args:
        path: the file.
        format: "mjcf" or "urdf" to override detection by extension and root element.
        **kwargs: passed to the URDF loader (floating_base, package_dirs, visual, mimic).

    Returns:
        The compiled `Model`.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ModelError(f"model file not found: {path}")
    if format is None:
        ext = os.path.splitext(path)[1].lower()
        if ext == ".urdf":
            format = "urdf"
        elif ext in (".xml", ".mjcf"):
            format = "mjcf"
        else:
            with open(path, encoding="utf-8", errors="replace") as f:
                format = _sniff(f.read(4096), path)
    if format == "mjcf":
        if kwargs:
            raise TypeError(f"MJCF loading takes no options, got {sorted(kwargs)}")
        from jointspace.io.mjcf import load_mjcf

        return load_mjcf(path)
    if format == "urdf":
        from jointspace.io.urdf import load_urdf

        return load_urdf(path, **kwargs)
    raise ValueError(f"format must be one of {_FORMATS}, got {format!r}")


def load_string(text, *, format=None, **kwargs):
    """Load and compile a model from a string (MJCF or URDF, detected from the root element)."""
    if format is None:
        format = _sniff(text, "<string>")
    if format == "mjcf":
        from jointspace.io.mjcf import load_mjcf_string

        return load_mjcf_string(text, **kwargs)
    if format == "urdf":
        from jointspace.io.urdf import load_urdf_string

        return load_urdf_string(text, **kwargs)
    raise ValueError(f"format must be one of {_FORMATS}, got {format!r}")


__all__ = ["load", "load_string", "compile_model", "ModelSpec"]
