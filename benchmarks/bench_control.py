"""Control steps from the dynamics: jointspace vs the same laws written on MuJoCo/Pinocchio.

Run: python benchmarks/bench_control.py [--quick]

Rows (median µs per call from Python; ratios are medians over rounds, the contenders timed
in alternation batch by batch):

    OSC, arm7      one `OperationalSpace` step: 6-D tool pose task + posture in the null
                   space (state stage, Jacobian, J̇q̇, Λ from sparse solves, torque); one
                   compiled call. Peers: the same law in Python on
                   MuJoCo (mj_kinematics, mj_comPos, mj_crb, mj_factorM, mj_comVel,
                   mj_rne, mj_passive, mj_jacSite, mj_jacDot, mj_solveM on Jᵀ, NumPy for Λ,
                   the null-space projection and τ) and on Pinocchio (computeAllTerms,
                   getFrameJacobian, getFrameClassicalAcceleration, computeMinverse,
                   NumPy for the rest). Pinocchio gets arm7 through buildModelFromMJCF.
    step, arm7     one simulation step (js.step / mj_step), for scale.
    WBID, humanoid one `WholeBodyID` step standing on the floor (state stage, collision,
                   constraint rows, 18 task rows in two levels, posture, the Newton solve
                   of the base acceleration with the soft-contact predictor, motor
                   commands). No peer has this controller; the row is set against one
                   simulation step (js.step / mj_step) and against MuJoCo's mj_forward +
                   mj_inverse (the work of one soft-contact prediction).
"Loop" is our per-call time inside a compiled loop (no Python crossing).
"""

import argparse
import os
import sys
import tempfile
import warnings

import mujoco
import numpy as np
from numba import njit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import per_call, table, us  # noqa: E402

import jointspace as js  # noqa: E402
from jointspace import control  # noqa: E402
from jointspace.control.kernels import osc_kernel, wbid  # noqa: E402


@njit(cache=True)
def _loop_osc(m, d, ib, fb, out, n):
    for _ in range(n):
        osc_kernel(m, d, ib, fb, out)


@njit(cache=True)
def _loop_wbid(m, d, ib, fb, out, n):
    for _ in range(n):
        wbid(m, d, ib, fb, out)


def rounds(fns, nround, number):
    """Median per-call time of each function, and per-round ratios to the first."""
    times = [[] for _ in fns]
    for _ in range(nround):
        for k, fn in enumerate(fns):
            times[k].append(per_call(fn, number=number, repeat=1))
    med = [float(np.median(t)) for t in times]
    ratios = [float(np.median(np.array(times[0]) / np.array(t))) for t in times]
    return med, ratios


KP = np.array([400.0, 400.0, 400.0, 300.0, 300.0, 300.0])
KD = np.array([40.0, 40.0, 40.0, 35.0, 35.0, 35.0])
KPN, KDN = 25.0, 10.0


def _osc_numpy(M_solve, J, jdot, x_err, xdot_err, c, a0, M_mul):
    """The OSC law with dense NumPy pieces (shared by the peer implementations)."""
    X = M_solve(J.T)  # M⁻¹ Jᵀ
    lam = np.linalg.inv(J @ X)
    jbar = X @ lam
    b = KD * xdot_err + KP * x_err - jdot
    qacc = jbar @ b
    qacc += a0 - jbar @ (J @ a0)
    return M_mul(qacc) + c


def arm7_rows(nround, number):
    """Rows for the arm: OSC step (ours, MuJoCo, Pinocchio) and one simulation step."""
    m = js.models.arm7()
    d = js.make_data(m)
    ready = np.array(js.models.ARM7_READY)
    d.qpos[:] = ready + 0.05
    d.qvel[:] = 0.1
    tool = control.SiteTask("ee", kp=KP, kd=KD, orientation=True)
    osc = control.OperationalSpace(m, [tool], control.Posture(ready, kp=KPN, kd=KDN))
    osc.hold(d)
    tool.set_target(pos=d.site_xpos[0] + 0.01)
    target = d.site_xpos[0].copy()
    xml = js.models.xml("arm7")
    mjm = mujoco.MjModel.from_xml_string(xml)
    mjd = mujoco.MjData(mjm)
    mjd.qpos[:], mjd.qvel[:] = d.qpos, d.qvel
    nv = m.nv
    jac = np.zeros((6, nv))
    jdot = np.zeros((6, nv))
    res = np.zeros(nv)
    Mx = np.zeros(nv)
    quat_des = np.array([0.0, 0.0, 1.0, 0.0])

    def mj_osc():
        mujoco.mj_kinematics(mjm, mjd)
        mujoco.mj_comPos(mjm, mjd)
        mujoco.mj_crb(mjm, mjd)
        mujoco.mj_factorM(mjm, mjd)
        mujoco.mj_comVel(mjm, mjd)
        mujoco.mj_passive(mjm, mjd)
        mujoco.mj_rne(mjm, mjd, 0, res)
        mujoco.mj_jacSite(mjm, mjd, jac[:3], jac[3:], 0)
        mujoco.mj_jacDot(mjm, mjd, jdot[:3], jdot[3:], mjd.site_xpos[0], mjm.site_bodyid[0])
        q = np.empty(4)
        mujoco.mju_mat2Quat(q, mjd.site_xmat[0])
        qe = np.empty(4)
        mujoco.mju_negQuat(q, q)
        mujoco.mju_mulQuat(qe, quat_des, q)
        rot = np.empty(3)
        mujoco.mju_quat2Vel(rot, qe, 1.0)
        x_err = np.r_[target - mjd.site_xpos[0], rot]
        a0 = KPN * (ready - mjd.qpos) - KDN * mjd.qvel

        def solve(B):
            out = np.empty((B.shape[1], nv))
            mujoco.mj_solveM(mjm, mjd, out, np.ascontiguousarray(B.T))
            return out.T

        def mul(x):
            mujoco.mj_mulM(mjm, mjd, Mx, x)
            return Mx.copy()

        return _osc_numpy(solve, jac, jdot @ mjd.qvel, x_err, -jac @ mjd.qvel,
                          res - mjd.qfrc_passive, a0, mul)

    rows = []
    fns = [lambda: osc(d), mj_osc]
    names = ["jointspace", "MuJoCo + NumPy"]
    pin_osc = _pinocchio_osc(xml, d, ready, target, quat_des)
    if pin_osc is not None:
        fns.append(pin_osc)
        names.append("Pinocchio + NumPy")
    med, ratios = rounds(fns, nround, number)
    loop = per_call(lambda: _loop_osc(m._s, d._s, osc.ibuf, osc.fbuf, osc.out, number),
                    number=1) / number
    for k, name in enumerate(names):
        rows.append(["OSC step, arm7", name, us(med[k]), f"{1 / ratios[k]:.2f}" if k else "1",
                     us(loop) if k == 0 else ""])
    step_med, step_ratio = rounds([lambda: js.step(m, d), lambda: mujoco.mj_step(mjm, mjd)],
                                  nround, number)
    rows.append(["step, arm7", "jointspace", us(step_med[0]), "1", ""])
    rows.append(["step, arm7", "MuJoCo", us(step_med[1]), f"{1 / step_ratio[1]:.2f}", ""])
    return rows


def _pinocchio_osc(xml, d, ready, target, quat_des):
    """The OSC law on Pinocchio (its model of arm7 from the MJCF), or None without pin."""
    try:
        import pinocchio as pin
    except ImportError:
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
        f.write(xml)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = pin.buildModelFromMJCF(f.name)
    os.unlink(f.name)
    data = model.createData()
    jid = model.getJointId("j7")
    fid = model.addFrame(pin.Frame("tool", jid, 0, pin.SE3(np.eye(3), np.array([0, 0, 0.11])),
                                   pin.FrameType.OP_FRAME))
    data = model.createData()
    q = np.array(d.qpos)
    v = np.array(d.qvel)
    rdes = pin.Quaternion(*quat_des).toRotationMatrix()
    world = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED

    def pin_osc():
        pin.computeAllTerms(model, data, q, v)
        pin.updateFramePlacement(model, data, fid)
        J = pin.getFrameJacobian(model, data, fid, world)
        acc = pin.getFrameClassicalAcceleration(model, data, fid, world)
        jdot = np.r_[acc.linear, acc.angular]
        pose = data.oMf[fid]
        x_err = np.r_[target - pose.translation, pin.log3(rdes @ pose.rotation.T)]
        Minv = pin.computeMinverse(model, data, q)
        Minv = np.triu(Minv) + np.triu(Minv, 1).T
        a0 = KPN * (ready - q) - KDN * v
        return _osc_numpy(lambda B: Minv @ B, J, jdot, x_err, -J @ v, data.nle, a0,
                          lambda x: data.M @ x)

    return pin_osc


def humanoid_rows(nround, number):
    """Rows for the humanoid standing: WBID step, simulation steps, mj_inverse."""
    m = js.models.humanoid()
    d = js.make_data(m)
    feet = (control.SiteTask("left_foot", kp=100.0, kd=20.0, orientation=True),
            control.SiteTask("right_foot", kp=100.0, kd=20.0, orientation=True))
    upper = (control.ComTask(kp=60.0, kd=16.0),
             control.BodyTask("torso", kp=80.0, kd=18.0, position=False, orientation=True))
    gains = np.r_[np.zeros(6), np.full(m.nv - 6, 25.0)]
    wb = control.WholeBodyID(m, [feet, upper], control.Posture(m.qpos0, gains, gains / 2.5),
                             output="ctrl")
    wb.hold(d)
    for _ in range(50):
        wb(d)
        js.step(m, d)
    state = (d.qpos.copy(), d.qvel.copy())
    mjm = mujoco.MjModel.from_xml_string(js.models.xml("humanoid"))
    mjd = mujoco.MjData(mjm)
    mjd.qpos[:], mjd.qvel[:], mjd.ctrl[:] = d.qpos, d.qvel, d.ctrl
    qacc = wb.qacc.copy()

    def ours():
        d.qpos[:], d.qvel[:] = state
        wb(d)

    def ours_step():
        d.qpos[:], d.qvel[:] = state
        js.step(m, d)

    def mj_step():
        mjd.qpos[:], mjd.qvel[:] = state
        mujoco.mj_step(mjm, mjd)

    def mj_inverse():
        mjd.qpos[:], mjd.qvel[:] = state
        mujoco.mj_forward(mjm, mjd)
        mjd.qacc[:] = qacc
        mujoco.mj_inverse(mjm, mjd)

    med, ratios = rounds([ours, ours_step, mj_step, mj_inverse], nround, number)
    d.qpos[:], d.qvel[:] = state
    loop = per_call(lambda: _loop_wbid(m._s, d._s, wb.ibuf, wb.fbuf, wb.out, number),
                    number=1) / number
    d.qpos[:], d.qvel[:] = state
    wb(d)
    label = f"WBID step, humanoid ({d.ncon[0]} contacts, {d.nefc[0]} rows, {wb.iterations} it)"
    return [[label, "jointspace", us(med[0]), "1", us(loop)],
            ["step, humanoid", "jointspace", us(med[1]), f"{1 / ratios[1]:.2f}", ""],
            ["step, humanoid", "MuJoCo", us(med[2]), f"{1 / ratios[2]:.2f}", ""],
            ["mj_forward + mj_inverse", "MuJoCo", us(med[3]), f"{1 / ratios[3]:.2f}", ""]]


def main():
    """Print the table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    nround, number = (5, 100) if args.quick else (15, 500)
    rows = arm7_rows(nround, number) + humanoid_rows(nround, number)
    print(table(rows, ["operation", "implementation", "µs per call", "time / first row",
                       "ours in loop µs"]))


if __name__ == "__main__":
    main()
