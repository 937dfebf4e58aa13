"""Sensors: what an IMU, joint encoders and foot contacts add to a step, against MuJoCo's.

Run: python benchmarks/bench_sensors.py [--quick]
The embedded quadruped (18 dofs, feet on the floor) with and without the sensor set of a
legged robot's controller: accelerometer, gyro, velocimeter and framequat at the IMU site,
jointpos and jointvel of the 12 joints, a touch sensor per foot (41 values). Both libraries
step the same state from Python, 1,000 steps per call (`js.step(m, d, n)`,
`mujoco.mj_step(m, d, n)`), timed in alternation; prints µs per step and ours / MuJoCo, with
sensors and without, and what the sensors add to each. A third set adds the geometric
sensors: a rangefinder pointing down from each foot and a contact sensor per foot (the
foot's contacts with the floor: found, force, reduced to the net force).
"""

import sys

import mujoco
import numpy as np
from _timing import interleaved, table

import jointspace as js

SENSORS = """<sensor>
  <accelerometer site="imu"/><gyro site="imu"/><velocimeter site="imu"/>
  <framequat objtype="site" objname="imu"/>
  {joints}
  <touch site="fl_touch"/><touch site="fr_touch"/><touch site="hl_touch"/>
  <touch site="hr_touch"/>{geometric}
</sensor>"""
GEOMETRIC = "".join(f'<rangefinder site="{leg}_ray"/>'
                    f'<contact site="{leg}_touch" geom2="floor" data="found force" '
                    f'reduce="netforce"/>' for leg in ("fl", "fr", "hl", "hr"))


def quadruped_xml(sensors):
    """The embedded quadruped, with touch zones at the feet and (optionally) sensors."""
    xml = js.models.xml("quadruped")
    for leg in ("fl", "fr", "hl", "hr"):
        foot = f'<site name="{leg}_foot" pos="0 0 -0.285"/>'
        assert foot in xml
        xml = xml.replace(foot, foot + f'<site name="{leg}_touch" type="sphere" '
                                       f'pos="0 0 -0.285" size="0.05"/>'
                                       f'<site name="{leg}_ray" pos="0 0 -0.25" '
                                       f'quat="0 1 0 0"/>')
    if sensors:
        m = js.load_string(xml)
        joints = "".join(f'<jointpos joint="{n}"/><jointvel joint="{n}"/>'
                         for n in m.names["joint"][1:])
        geometric = GEOMETRIC if sensors == "geometric" else ""
        xml = xml.replace("</mujoco>", SENSORS.format(joints=joints, geometric=geometric)
                          + "</mujoco>")
    return xml


def _pair(sensors, nstep):
    """(ours, theirs, nsensordata): 1,000 steps from the same settled state in each library."""
    xml = quadruped_xml(sensors)
    m = js.load_string(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    d, md = js.make_data(m), mujoco.MjData(mm)
    js.step(m, d, 500)  # settle on the floor; compile outside the timing
    mujoco.mj_step(mm, md, 500)
    spec = mujoco.mjtState.mjSTATE_INTEGRATION
    start = js.get_state(m, d, "integration")
    mstart = np.empty(mujoco.mj_stateSize(mm, spec))
    mujoco.mj_getState(mm, md, mstart, spec)

    def ours():
        js.set_state(m, d, start, "integration")
        js.step(m, d, nstep)

    def theirs():
        mujoco.mj_setState(mm, md, mstart, spec)
        mujoco.mj_step(mm, md, nstep)

    return ours, theirs, m.nsensordata


def main(argv=None):
    """Print the table."""
    quick = "--quick" in (sys.argv[1:] if argv is None else argv)
    repeat = 5 if quick else 21
    nstep = 1000
    o0, t0, _ = _pair(False, nstep)
    o1, t1, nsd = _pair(True, nstep)
    o2, t2, nsd2 = _pair("geometric", nstep)
    times = [t / nstep for t in interleaved([o0, t0, o1, t1, o2, t2], repeat)]
    rows = []
    for label, n, (ours, theirs) in (("without sensors", 0, times[:2]),
                                     ("with IMU, encoders, touch", nsd, times[2:4]),
                                     ("+ 4 rangefinders, 4 contact", nsd2, times[4:])):
        rows.append([label, str(n), f"{np.median(ours) * 1e6:.2f}",
                     f"{np.median(theirs) * 1e6:.2f}", f"{np.median(ours / theirs):.2f}"])
    print(f"quadruped on the floor, {nstep} steps per call, median of {repeat} rounds "
          f"(all four timed in alternation)")
    print(table(rows, ["model", "nsensordata", "ours µs/step", "mj_step µs/step",
                       "ours / MuJoCo"]))
    add_ours = np.median(times[2] - times[0]) * 1e6
    add_theirs = np.median(times[3] - times[1]) * 1e6
    print(f"\nthe sensors add {add_ours:.2f} µs per step here, {add_theirs:.2f} µs in MuJoCo "
          f"(median of the per-round differences)")
    geo_ours = np.median(times[4] - times[2]) * 1e6
    geo_theirs = np.median(times[5] - times[3]) * 1e6
    print(f"the rangefinders and contact sensors add {geo_ours:.2f} µs per step here, "
          f"{geo_theirs:.2f} µs in MuJoCo")
    return 0


if __name__ == "__main__":
    sys.exit(main())
