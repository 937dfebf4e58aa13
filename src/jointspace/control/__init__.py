"""Control from the dynamics: feedback linearization, operational space, whole-body ID.

Small objects, each one compiled call per control step at the state in a Data (the sensed
qpos, qvel), writing its torque to d.qfrc_applied or d.ctrl:

    ComputedTorque     feedback linearization τ = c − M (B q̇ + K (q − q_ref)) and its tracking
                       form (slides 001); collocated partial feedback linearization with
                       unactuated dofs, reporting infeasible commands
    OperationalSpace   Khatib's operational-space control: site/body/com tasks in priority
                       order, a null-space posture q*, damped near singularities
    WholeBodyID        inverse-dynamics control of a floating base on soft contacts whose
                       forces the model predicts (004); the contact model is a plug-in
    task_inertia       Λ = (J M⁻¹ Jᵀ)⁻¹ from the sparse factorization or the analytical M⁻¹
    soft_inverse       the soft-contact inverse at a given q̈ (`jointspace.inverse`)
    PD                 joint-space PD/PID feedback (paper 002's baseline)
    InverseDynamics    computed torque on the actuated dofs with contact forces from a
                       predictor: NoContacts, SensedContacts, RigidContacts (paper 002's
                       rigid-contact inverse), SoftContacts (the 2014 soft-contact inverse)

    import jointspace as js
    from jointspace import control

    m = js.models.arm7()
    d = js.make_data(m)
    osc = control.OperationalSpace(
        m, [control.SiteTask("ee", kp=400, kd=40, orientation=True)],
        posture=control.Posture(m.qpos0, kp=25, kd=10))
    osc.hold(d)
    for _ in range(1000):
        osc(d)                 # τ into d.qfrc_applied
        js.step(m, d)

See docs/control.md for the equations, the tests that back them and the examples.
"""

from jointspace.control.feedback import ComputedTorque
from jointspace.control.joint import (
    PD,
    ControlOutput,
    InverseDynamics,
    NoContacts,
    RigidContacts,
    SensedContacts,
    SoftContacts,
)
from jointspace.control.osc import (
    BodyTask,
    ComTask,
    OperationalSpace,
    Posture,
    SiteTask,
    Task,
    task_inertia,
)
from jointspace.control.wbid import WholeBodyID, inverse_predictor, soft_inverse

__all__ = [
    "BodyTask", "ComTask", "ComputedTorque", "ControlOutput", "InverseDynamics", "NoContacts",
    "OperationalSpace", "PD", "Posture", "RigidContacts", "SensedContacts", "SiteTask",
    "SoftContacts", "Task", "WholeBodyID", "inverse_predictor", "soft_inverse", "task_inertia",
]
