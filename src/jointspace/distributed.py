"""Rollouts on a Ray cluster: the batch split across workers that stay warm between calls.

Install with `pip install jointspace[ray]`. Ray is imported when a `RayRollout` is made, so
this module imports without it.

    import ray
    import jointspace as js
    from jointspace.distributed import RayRollout

    ray.init(address="auto")  # the cluster this machine belongs to; or "ray://head:10001"
    with RayRollout(nworker=8, nthread=4) as pool:
        state, sensordata = pool.rollout(m, initial_state, control)

`RayRollout.rollout` has the semantics of `jointspace.rollout` and returns bitwise the same
arrays. Each worker is a Ray actor: one process holding a `jointspace.Rollout` of nthread
threads, so its compiled kernels are loaded once, and the models it last ran (sent once per
set of models as a pickle of their arrays, and kept under a digest of that pickle). A call
cuts the batch into tasks of contiguous rollouts (by default one per worker), sends each
worker only its slice of the initial states, controls and warm starts, and writes the
results back in order. A task whose worker dies (its process killed, its node lost) runs
again on a new worker in that worker's place, up to `max_retries` times; an error raised by
jointspace itself (a bad argument, a singular model) is not retried but raised as it is.

Compiled code on the workers: a worker process loads the kernels from Numba's cache beside
the installed package (docs/api.md, "Rollouts"). With `ship_cache=True` (the default) the
driver first runs a one-step rollout in a fresh interpreter (loading, or once compiling,
the kernels) and sends the cache files of every kernel it used (`jointspace._numba.ship`)
to the workers, which write those that their node lacks before their first call: a node whose
cache is cold loads instead of compiling for minutes. Numba checks each shipped entry on
the worker (source stamp, Numba version, CPU); one that does not fit is compiled there.
`RayRollout(warm=True)` (the default) makes every worker load or compile at start-up and
reports it in `RayRollout.workers`.
"""

import hashlib
import os
import pickle
import socket
import time
import warnings

import numpy as np

from jointspace._numba import ship
from jointspace.diagnostics import check_not_singular
from jointspace.errors import JointspaceError, JointspaceWarning
from jointspace.rollout import Rollout, check_args, check_output, state_size
from jointspace.state import STATE_CTRL


def _ray():
    """The ray module, or an ImportError that says how to install it."""
    try:
        import ray
    except ImportError:
        raise ImportError("jointspace.distributed needs Ray: pip install 'jointspace[ray]' "
                          "(or pip install ray)") from None
    return ray


class _Worker:
    """The worker side (a Ray actor): a Rollout pool and the models of the last call."""

    def __init__(self, nthread, cache=None):
        self._pool = Rollout(nthread=nthread)
        self._key = None
        self._models = None
        # the driver's compiled kernels, written before anything here loads a kernel
        self.shipped = ship.install(pickle.loads(cache)) if cache is not None else 0

    def warm_up(self):
        """Load (or compile) the rollout kernels; (pid, seconds, functions compiled)."""
        from jointspace._numba import notice

        t0 = time.perf_counter()
        _warm_up(self._pool)
        return os.getpid(), time.perf_counter() - t0, notice.compiled()

    def cache_files_written(self):
        """How many shipped cache files this worker wrote at start-up (its node lacked them)."""
        return self.shipped

    def pid(self):
        """The worker's process id."""
        return os.getpid()

    def run(self, key, models_ref, a, b, x0, control, warmstart, nstep, control_spec):
        """Rollouts a … b − 1 (rows of x0, control, warmstart: theirs, or one to tile)."""
        if key != self._key:
            ray = _ray()
            self._models = pickle.loads(ray.get(models_ref[0]))
            self._key = key
        models = self._models if len(self._models) == 1 else self._models[a:b]
        diverged = np.empty(b - a, dtype=np.int64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", JointspaceWarning)  # the caller warns once
            state, sensordata = self._pool.rollout(models, None, x0, control, nstep=nstep,
                                                   initial_warmstart=warmstart,
                                                   diverged=diverged,
                                                   control_spec=control_spec)
        return state, sensordata, diverged


def _warm_up(pool):
    """One one-step rollout of the embedded pendulum: every rollout kernel loaded."""
    from jointspace.models import pendulum

    m = pendulum(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JointspaceWarning)
        pool.rollout(m, None, np.concatenate([[0.0], m.qpos0, [0.0]]), nstep=1)


class RayRollout:
    """Rollouts on Ray workers that keep their models and compiled kernels between calls.

    Attributes:
        nworker: number of workers (Ray actors), each with `nthread` threads.
        workers: per worker (pid, seconds its first load or compile took, functions it
            compiled), from start-up when warm, else empty.
        retries: how many tasks were run again after their worker died, in all calls.
        diverged: (nbatch,) int64 of the last call (see `jointspace.rollout`).
    """

    def __init__(self, nworker=None, *, nthread=1, address=None, max_retries=3, warm=True,
                 ship_cache=True, actor_options=None):
        """Start nworker workers on the Ray cluster (connecting to it if need be).

        Args:
            nworker: number of workers; default: the cluster's CPUs // nthread.
            nthread: threads per worker (each worker asks Ray for nthread CPUs).
            address: where the cluster is, if Ray is not initialized yet: "auto", "host:port"
                of a head node, or "ray://host:port" (Ray client); None starts a local cluster
                when none is running. A host:port where nothing answers is refused at once;
                once `ray.init` has been called, Ray stays connected where it is.
            max_retries: how many times one task may run again after its worker died.
            warm: load or compile the kernels on every worker now (see `workers`).
            ship_cache: send the compiled rollout kernels (loaded, or compiled once, by a
                fresh interpreter on this machine: a few seconds) to the workers, which write
                to their node's cache the files it lacks: a cold node loads, not compiles.
            actor_options: extra `ray.remote` options for the workers (resources,
                runtime_env, scheduling strategy).

        Raises:
            ImportError: Ray is not installed.
            ConnectionError: nothing answers at address.
            ValueError: nworker, nthread or max_retries out of range.
        """
        ray = _ray()
        fname = "RayRollout"
        for name, v, least in (("nthread", nthread, 1), ("max_retries", max_retries, 0)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < least:
                raise ValueError(f"{fname}: argument {name} must be an integer >= {least}, "
                                 f"got {v!r}")
        if address not in (None, "auto", "local"):
            _check_reachable(address, fname)
        if not ray.is_initialized():
            ray.init(address=address, log_to_driver=False)
        if nworker is None:
            nworker = max(1, int(ray.cluster_resources().get("CPU", 1)) // nthread)
        if isinstance(nworker, bool) or not isinstance(nworker, (int, np.integer)) or nworker < 1:
            raise ValueError(f"{fname}: argument nworker must be a positive integer, "
                             f"got {nworker!r}")
        self.nworker, self.nthread, self.max_retries = int(nworker), int(nthread), max_retries
        options = {"num_cpus": nthread, "max_restarts": 0, **(actor_options or {})}
        self._actor = ray.remote(**options)(_Worker)
        self._cache_ref = None
        if ship_cache:
            code = ("from jointspace import distributed as d, Rollout; "
                    "d._warm_up(Rollout(nthread=1))")
            self._cache_ref = ray.put(pickle.dumps(ship.bundle_of(code), protocol=5))
        self._workers = [self._new_worker() for _ in range(self.nworker)]
        self._models_key = None
        self._models_ref = None
        self.retries = 0
        self.diverged = None
        self.workers = ray.get([w.warm_up.remote() for w in self._workers]) if warm else []

    def _new_worker(self):
        return self._actor.remote(self.nthread, self._cache_ref)

    def __enter__(self):
        """The RayRollout itself."""
        return self

    def __exit__(self, *exc):
        """Stop the workers."""
        self.close()

    def close(self):
        """Stop the workers (Ray actors); later calls raise RuntimeError."""
        ray = _ray()
        for w in self._workers:
            ray.kill(w)
        self._workers = []

    def worker_pids(self):
        """The process ids of the workers, in worker order."""
        ray = _ray()
        return ray.get([w.pid.remote() for w in self._workers])

    def rollout(self, model, initial_state, control=None, *, nstep=None,
                initial_warmstart=None, chunk_size=None, state=None, sensordata=None,
                diverged=None, control_spec=STATE_CTRL):
        """Roll out trajectories on the workers; the arguments of `jointspace.rollout`.

        Args:
            model: a Model, or a sequence of nbatch Models of identical sizes.
            initial_state: (nbatch | 1, nstate) initial states.
            control: optional (nbatch | 1, nstep | 1, ncontrol) controls: the inputs
                control_spec selects (ctrl by default).
            nstep: number of steps (default: control's second dimension, or 1).
            initial_warmstart: optional (nbatch | 1, nv) initial qacc_warmstart.
            chunk_size: rollouts per task (default: nbatch split evenly over the workers).
            state: optional output (nbatch, nstep, nstate).
            sensordata: optional output (nbatch, nstep, nsensordata).
            diverged: optional output (nbatch,) int64.
            control_spec: which user inputs control holds (default ctrl, MuJoCo's
                mjSTATE_CTRL); see `jointspace.Rollout.rollout`.

        Returns:
            (state, sensordata), bitwise those of `jointspace.rollout`.

        Raises:
            TypeError, ValueError, SingularMassError: as `jointspace.rollout`.
            JointspaceError: a task failed on max_retries + 1 workers.
            RuntimeError: the RayRollout was closed.
        """
        ray = _ray()
        fname = "RayRollout.rollout"
        if not self._workers:
            raise RuntimeError(f"{fname}: this RayRollout was closed; make a new one")
        a = check_args(model, initial_state, control, nstep, initial_warmstart, fname,
                       state=state, sensordata=sensordata, diverged=diverged,
                       control_spec=control_spec)
        nbatch, nstep = a.nbatch, a.nstep
        state = check_output(state, (nbatch, nstep, state_size(a.models[0])), np.float64, fname,
                        "state")
        sensordata = check_output(sensordata, (nbatch, nstep, a.models[0].nsensordata), np.float64,
                                  fname, "sensordata")
        diverged = check_output(diverged, (nbatch,), np.int64, fname, "diverged")
        for m in {id(m): m for m in a.models}.values():
            if m.singular_dofs:
                check_not_singular(m, fname)
        if chunk_size is None:
            chunk_size = max(1, -(-nbatch // self.nworker))
        elif (isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer))
              or chunk_size < 1):
            raise ValueError(f"{fname}: argument chunk_size must be a positive integer, "
                             f"got {chunk_size!r}")
        diverged[:] = -1
        if nbatch and nstep:
            key, ref = self._models(a.models)
            tasks = [(s, min(nbatch, s + chunk_size)) for s in range(0, nbatch, chunk_size)]
            self._gather(ray, a, key, ref, tasks, state, sensordata, diverged, fname)
        self.diverged = diverged
        bad = np.flatnonzero(diverged >= 0)
        if bad.size:
            warnings.warn(f"{fname}: {bad.size} of {nbatch} rollouts diverged, the first "
                          f"rollout {int(bad[0])} at step {int(diverged[bad[0]])}; see the "
                          "diverged output", JointspaceWarning, stacklevel=2)
        return state, sensordata

    def _models(self, models):
        """(digest, [object ref]) of the pickled models, put in the object store once."""
        ray = _ray()
        blob = pickle.dumps(models, protocol=5)
        key = hashlib.blake2b(blob, digest_size=16).hexdigest()
        if key != self._models_key:
            self._models_ref = ray.put(blob)
            self._models_key = key
        return key, [self._models_ref]  # in a list: Ray hands the ref over unresolved

    def _gather(self, ray, a, key, ref, tasks, state, sensordata, diverged, fname):
        """Submit the tasks round-robin, rerun those whose worker died, write results."""
        def rows(x, s, e):
            return None if x is None else x if x.shape[0] == 1 else x[s:e]

        def submit(t, k):
            s, e = tasks[t]
            w = self._workers[k]
            return w.run.remote(key, ref, s, e, rows(a.initial_state, s, e),
                                rows(a.control, s, e), rows(a.initial_warmstart, s, e),
                                a.nstep, a.control_spec), w

        pending = {}
        for t in range(len(tasks)):
            k = t % self.nworker
            r, w = submit(t, k)
            pending[r] = (t, k, w, 0)
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            t, k, w, tries = pending.pop(done[0])
            try:
                st, sd, dv = ray.get(done[0])
            except ray.exceptions.RayTaskError as e:  # raised by jointspace: not retried
                raise e.as_instanceof_cause() from None
            except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError,
                    ray.exceptions.ObjectLostError) as e:
                if tries >= self.max_retries:
                    raise JointspaceError(
                        f"{fname}: rollouts {tasks[t][0]}–{tasks[t][1] - 1} failed on "
                        f"{tries + 1} workers, the last with: {e}") from e
                if self._workers[k] is w:  # the first of its tasks to fail: replace it
                    ray.kill(w)
                    self._workers[k] = self._new_worker()
                self.retries += 1
                r, w2 = submit(t, k)
                pending[r] = (t, k, w2, tries + 1)
                continue
            s, e = tasks[t]
            state[s:e] = st
            sensordata[s:e] = sd
            diverged[s:e] = dv


def _check_reachable(address, fname):
    """Raise ConnectionError unless something accepts a TCP connection at address."""
    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    try:
        port = int(port)
    except ValueError:
        raise ValueError(f"{fname}: address must be 'auto', 'host:port' or "
                         f"'ray://host:port', got {address!r}") from None
    try:
        socket.create_connection((host or "127.0.0.1", port), timeout=5).close()
    except OSError as e:
        raise ConnectionError(
            f"{fname}: no Ray cluster answers at {address!r} ({e}). Start one with "
            "`ray start --head` on the head node and pass the address it prints, or call "
            "ray.init() first") from None
