"""Compile every kernel ahead of first use: `js.compile()` and `jointspace compile`.

The kernels are compiled by running the public API once on small embedded models, in
separate processes that share Numba's on-disk cache, so a later process (a script, a test
run, a Ray worker) loads machine code instead of compiling it. Each job is one group of
public calls; jobs that inline the same compiled stages run one after the other (the
second loads what the first cached) and the others run beside them, one process per core.

    python -m jointspace compile            # every job, one process per core
    python -m jointspace compile --jobs 1   # one process (slowest, least memory)

A job run twice is a cache load: `compile` after a finished `compile` takes a few seconds.
The jobs compile for this machine's CPU even the kernels the package ships prebuilt in
generic x86-64 code (`_numba/prebuilt.py`), which a process then no longer loads; with
`prebuilt=True` they load those instead and compile only what the store lacks (the test
suite's precompile: the code a user runs after installing; the store holds every job's
kernels, so from an empty cache this takes seconds where the store fits).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np

from jointspace.errors import JointspaceError


def _job_step(js, m, d):
    js.step(m, d, 2)  # every integrator and solver are in one step kernel


def _job_forward(js, m, d):
    js.forward(m, d)
    js.collision(m, d)
    js.make_constraint(m, d)
    js.solve(m, d)
    js.primal_cost(m, d, d.qacc.copy())


def _job_inverse(js, m, d):
    js.forward(m, d)
    js.inverse(m, d)
    js.compare_fwd_inv(m, d)
    js.inverse_step(m, d, d.qvel.copy())
    js.inverse_trajectory(m, d, d.qpos[None].repeat(3, 0), d.qvel[None].repeat(3, 0),
                          d.qacc[None].repeat(3, 0))
    js.inverse_derivatives(m, d)
    js.transition_derivatives(m, d)  # calls the step kernel: after the "step" job


def _job_dynamics(js, m, d):
    q, v, a = m.qpos0.copy(), np.zeros(m.nv), np.zeros(m.nv)
    js.kinematics(m, d)
    js.rnea(m, d, q, v, a)
    js.bias_forces(m, d, q, v)
    js.gravity_forces(m, d, q)
    js.crba(m, d, q)
    js.aba(m, d, q, v, a)
    js.minv(m, d, q)
    js.rnea_derivatives(m, d, q, v, a)
    js.aba_derivatives(m, d, q, v, a)
    js.factor_m(m, d, q)
    js.solve_m(m, d, a)
    js.mul_m(m, d, q, a)
    js.coriolis_matrix(m, d, q, v)
    js.christoffel(m, d, q)
    js.kinetic_energy(m, d, q, v)
    js.potential_energy(m, d, q)


def _job_kinematics(js, m, d):
    js.kinematics(m, d)
    js.jacobian_site(m, d, 0)
    js.jacobian_body(m, d, 1)
    js.jacobian_body_com(m, d, 1)
    js.jacobian_subtree_com(m, d, 1)
    js.com_vel(m, d)
    js.jacobian_dot_qvel(m, d, 1, np.zeros(3))
    js.diff_pos(m, m.qpos0, js.integrate_pos(m, m.qpos0, np.zeros(m.nv), 1.0))


def _job_contact_models(js, m, d):
    js.forward(m, d)
    js.rigid.inverse_dynamics(m, d, np.zeros(m.nv))
    js.barrier_forward(m, d, 0.1)


def _job_rollout(js, m, d):
    x = np.concatenate([[0.0], m.qpos0, np.zeros(m.nv)])
    js.rollout(m, d, x, nstep=2)


def _job_control(js, m, d):
    from jointspace import control

    def tasks():  # a task belongs to one controller
        feet = (control.SiteTask("left_foot", kp=100.0, kd=20.0, orientation=True),
                control.SiteTask("right_foot", kp=100.0, kd=20.0, orientation=True))
        upper = (control.ComTask(kp=50.0, kd=15.0),
                 control.BodyTask("torso", kp=50.0, kd=15.0, position=False,
                                  orientation=True))
        return [feet, upper], control.Posture(m.qpos0, kp=20.0, kd=5.0)

    js.forward(m, d)
    control.WholeBodyID(m, *tasks())(d)
    control.WholeBodyID(m, *tasks(), predictor=control.inverse_predictor(js.inverse))(d)
    control.OperationalSpace(m, *tasks(), actuated=list(range(m.nv)))(d)
    control.ComputedTorque(m, kp=20.0, kd=5.0, track="actuated")(d)
    control.task_inertia(m, d, m.qpos0, np.vstack(js.jacobian_site(m, d, 0)))
    control.soft_inverse(m, d, d.qacc.copy())


# With the store (`prebuilt`), the step job loads its entry and compiles none of the stages;
# forward's calls of single stages (collision, rows, solve) compile them, so the jobs that
# inline them follow forward instead of compiling them beside it a second time.
_PREBUILT_DEPS = {"inverse": ("forward",), "contact": ("forward",), "control": ("forward",)}

JOBS = {
    # name: (function, jobs it must follow because it inlines the stages they compile,
    #        the embedded model it runs on)
    "step": (_job_step, (), "humanoid"),
    "dynamics": (_job_dynamics, (), "humanoid"),
    "kinematics": (_job_kinematics, (), "humanoid"),
    "forward": (_job_forward, ("step",), "humanoid"),
    "inverse": (_job_inverse, ("step",), "humanoid"),
    "contact": (_job_contact_models, ("step",), "quadruped"),
    "rollout": (_job_rollout, ("step",), "humanoid"),
    "control": (_job_control, ("step",), "humanoid"),
}


_WORKER = ("import sys, jointspace; from jointspace.precompile import run_job; "
           "run_job(jointspace, sys.argv[1])")


def run_job(js, name):
    """Run one job in this process with the package js (the worker side of `compile`)."""
    from jointspace._numba import notice

    t0 = time.perf_counter()
    fn, _, model = JOBS[name]
    m = js.models.load(model)
    fn(js, m, js.make_data(m))
    print(f"{name} {notice.compiled()} {time.perf_counter() - t0:.1f}", flush=True)


def compile(jobs=None, progress=True, stream=None, prebuilt=False):
    """Compile every kernel into Numba's on-disk cache, in parallel processes.

    Args:
        jobs: processes at once (default: the machine's cores).
        progress: show a progress line on `stream` (stderr by default).
        stream: where progress goes.
        prebuilt: load the kernels the package ships in generic x86-64 code (where they
            fit this Python, Numba and platform) instead of compiling them for this CPU;
            the rest is compiled as usual. Later processes then load those from the
            package too, as after a plain install.

    Returns:
        dict: per job, the functions compiled (0 when all were loaded from the cache) and
        the seconds it took; under "total", the wall time.

    Raises:
        JointspaceError: a job failed (its output is in the message).
    """
    jobs = (os.cpu_count() or 1) if jobs is None else int(jobs)
    if jobs < 1:
        raise ValueError(f"compile: jobs must be at least 1, got {jobs}")
    stream = stream or sys.stderr
    # without `prebuilt` the jobs compile for this machine's CPU what the package's store
    # (_numba/prebuilt.py) has in generic code: later processes then find theirs first
    env = dict(os.environ, JOINTSPACE_COMPILE_NOTICE="0",
               JOINTSPACE_PREBUILT="1" if prebuilt else "0")
    todo = list(JOBS)
    running, done, result = {}, set(), {}
    t0 = time.perf_counter()
    tty = progress and stream.isatty()
    last = 0.0
    while todo or running:
        for name in list(todo):
            if len(running) >= jobs:
                break
            deps = _PREBUILT_DEPS.get(name, JOBS[name][1]) if prebuilt else JOBS[name][1]
            if all(dep in done for dep in deps):
                todo.remove(name)
                running[name] = subprocess.Popen(
                    [sys.executable, "-c", _WORKER, name], env=env,
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for name, proc in list(running.items()):
            if proc.poll() is None:
                continue
            out = proc.stdout.read()
            del running[name]
            if proc.returncode != 0:
                for other in running.values():
                    other.kill()
                raise JointspaceError(f"compile: job {name!r} failed "
                                      f"(exit {proc.returncode}):\n{out}")
            count, secs = out.strip().splitlines()[-1].split()[-2:]
            result[name] = {"compiled": int(count), "seconds": float(secs)}
            done.add(name)
        now = time.perf_counter()
        if progress and (tty or now - last >= 10.0 or not (todo or running)):
            last = now
            width = 20
            fill = width * len(done) // len(JOBS)
            line = (f"compile [{'#' * fill}{'-' * (width - fill)}] {len(done)}/{len(JOBS)} "
                    f"jobs, {now - t0:5.0f} s  running: {', '.join(running) or '-'}")
            stream.write(("\r" + line.ljust(100)) if tty else (line + "\n"))
            stream.flush()
        if running:
            time.sleep(0.2)
    if tty:
        stream.write("\n")
    result["total"] = {"seconds": time.perf_counter() - t0}
    return result

