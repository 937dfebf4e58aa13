"""Browser viewer: `view(m, d)` serves the model on a local web page that follows d live.

The page (`viewer.html`, `viewer.js`, shipped with the package) draws the same triangle
meshes as the offscreen renderer (`scene.Scene`) with WebGL and its own ~40-line shaders;
it loads nothing from the internet. A standard-library HTTP server on 127.0.0.1 serves

    /            the page            /scene.json      geoms' triangles and colors (once)
    /viewer.js   its code            /state?after=N   the latest pose, or 204 if still N

The page asks for the pose about 60 times a second (plain requests, so a headless
browser's virtual clock can run through them), and `Viewer.sync()` publishes d's current
pose (geom poses, contacts with their normal forces, body frames, center of mass) to every
open page: the passive mode of MuJoCo's viewer, where the simulation loop stays yours.

    v = js.view(m, d)             # opens the default browser (open_browser=False: don't)
    for _ in range(2000):
        js.step(m, d)
        v.sync()                  # at most 60 updates a second reach the page
    v.close()
"""

from __future__ import annotations

import json
import threading
import time
import webbrowser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources

import numpy as np

from jointspace.viz.scene import Scene

_FILES = {"/": ("viewer.html", "text/html; charset=utf-8"),
          "/viewer.js": ("viewer.js", "text/javascript; charset=utf-8")}


def _round(a, digits=5):
    return np.round(np.asarray(a, dtype=float), digits).ravel().tolist()


def scene_json(m, scene):
    """The geoms' meshes for the page: per geom, its triangles' corners and colors."""
    geoms = []
    for g in scene.geoms:
        fmask = scene.vert_geom[scene.face[:, 0]] == g
        faces = scene.face[fmask]
        corners = scene.vert[faces]                          # (k, 3, 3) in the geom frame
        # material colors only: the page lights them as raster.shade does
        geoms.append({"id": int(g), "name": m.names["geom"][g] or f"geom {g}",
                      "body": int(m.geom_bodyid[g]),
                      "pos": _round(corners), "rgb": _round(scene.face_rgba[fmask, :3], 4)})
    return {"model": m.source, "ngeom": int(m.ngeom), "nbody": int(m.nbody),
            "extent": scene.extent, "geoms": geoms,
            "bodies": [n or f"body {b}" for b, n in enumerate(m.names["body"])]}


def state_json(m, d, version, camera=None):
    """The pose the page draws: geom poses, contacts, body frames, center of mass.

    With `camera` (a model camera's name or id) also that camera's eye, axes and fovy.
    """
    from jointspace.trajectory import contact_normal_forces
    from jointspace.viz.raster import model_camera

    n = int(d.ncon[0])
    force = contact_normal_forces(m, d) if n else np.zeros(0)
    weight = float(m.body_mass.sum() * np.linalg.norm(m.opt.gravity)) or 1.0
    extra = {}
    if camera is not None:
        eye, rot, fovy, ortho = model_camera(m, d, camera)
        extra["cam"] = {"eye": _round(eye), "rot": _round(rot), "fovy": fovy,
                        "orthographic": ortho}
    return {**extra, "version": version, "time": float(d.time), "ncon": n,
            "geom_xpos": _round(d.geom_xpos), "geom_xmat": _round(d.geom_xmat),
            "xpos": _round(d.xpos), "xmat": _round(d.xmat),
            "com": _round(d.subtree_com[0]),
            "contact_pos": _round(d.contact_pos[:n]),
            "contact_normal": _round(d.contact_frame[:n, :3]),
            "contact_force": _round(force / weight)}


class Viewer:
    """A running browser viewer of one model (see the module docstring).

    Attributes:
        url: the page's address.
        page_version: the newest pose version a page has fetched (each `sync` that is
            published increments the version; 1 after `view`).
    """

    def __init__(self, m, d=None, *, port=0, open_browser=True, show_contacts=False,
                 show_frames=False, show_com=False, max_rate=60.0, camera=None):
        from jointspace.kinematics import kinematics
        from jointspace.types import make_data

        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port < 65536:
            raise ValueError(f"view: argument port must be an integer 0 … 65535, got {port!r}")
        self.m = m
        self.camera = None if camera is None else m.camera(camera)
        self.d = d if d is not None else make_data(m)
        if not np.any(self.d.geom_xmat):
            kinematics(m, self.d)
        self._scene = json.dumps(scene_json(m, Scene(m))).encode()
        self._options = {"contacts": bool(show_contacts), "frames": bool(show_frames),
                         "com": bool(show_com)}
        self._lock = threading.Lock()
        self._version = 0
        self._state = b""
        self._min_interval = 1.0 / max_rate if max_rate else 0.0
        self._last = 0.0
        self.page_version = 0
        self.sync(force=True)
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        name="jointspace-viewer")
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/"
        if open_browser:
            webbrowser.open(self.url)

    def sync(self, d=None, *, force=False):
        """Publish the current pose of d (default: the Data given to `view`) to the pages.

        Calls closer together than 1/max_rate seconds are skipped unless force=True, so a
        simulation loop may call it after every step.
        """
        now = time.perf_counter()
        if not force and now - self._last < self._min_interval:
            return
        self._last = now
        d = self.d if d is None else d
        body = json.dumps(state_json(self.m, d, self._version + 1, self.camera)).encode()
        with self._lock:
            self._version += 1
            self._state = body

    def close(self):
        """Stop the server (open pages keep their last picture)."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"Viewer({self.url}, pose version {self._version})"


def _handler(viewer):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, body, ctype, status=200):
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            path = self.path.split("?")[0]
            if path in _FILES:
                name, ctype = _FILES[path]
                body = resources.files(__package__).joinpath(name).read_bytes()
                self._send(body, ctype)
            elif path == "/scene.json":
                self._send(viewer._scene, "application/json")
            elif path == "/options.json":
                self._send(json.dumps(viewer._options).encode(), "application/json")
            elif path == "/state":
                query = dict(q.split("=", 1) for q in self.path.partition("?")[2].split("&")
                             if "=" in q)
                with viewer._lock:
                    version, body = viewer._version, viewer._state
                if query.get("after") == str(version):
                    self.send_response(204)
                    self.send_header("Cache-Control", "no-store")
                    self.end_headers()
                    return
                viewer.page_version = max(viewer.page_version, version)
                self._send(body, "application/json")
            else:
                self._send(b"not found", "text/plain", 404)

    return Handler


def view(m, d=None, *, port=0, open_browser=True, show_contacts=False, show_frames=False,
         show_com=False, camera=None):
    """Open the browser viewer on the model posed by d; returns the running `Viewer`.

    Args:
        m: the Model.
        d: the Data whose pose is shown (default: a new one at qpos0); call
            `Viewer.sync()` after stepping it to update the page.
        port: port on 127.0.0.1 (0: a free one).
        open_browser: open the page in the default browser.
        show_contacts: show contact points and normal forces at first (the page has a
            checkbox for each of these three).
        show_frames: show the body frames at first.
        show_com: show the center of mass at first.
        camera: the name or id of a model camera (MJCF <camera>) to look through; the mouse
            then does not move the view (default: the orbit camera).

    Returns:
        The `Viewer` (`.url`, `.sync()`, `.close()`; also a context manager).
    """
    return Viewer(m, d, port=port, open_browser=open_browser, show_contacts=show_contacts,
                  show_frames=show_frames, show_com=show_com, camera=camera)


__all__ = ["Viewer", "scene_json", "state_json", "view"]
