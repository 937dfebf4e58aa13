"""MJCF documents that exercise the loader and kinematics features, shared by tests.

Each covers a different slice of what real models use; together: free, ball, hinge and slide
joints, default classes with inheritance and childclass, euler/axisangle/xyaxes/zaxis frames,
fromto geoms, inertia from every primitive geom type, explicit diag/full inertia, joint
offsets, refs and degree ranges, sites.
"""

BRANCHED = """
<mujoco model="branched">
  <compiler angle="radian"/>
  <default>
    <joint damping="0.1" armature="0.01"/>
    <geom type="capsule" size="0.05"/>
    <default class="leg">
      <joint axis="0 1 0" range="-1 1"/>
      <geom rgba="1 0 0 1"/>
    </default>
  </default>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="torso" pos="0 0 1.2" euler="0.1 0.2 0.3">
      <freejoint name="root"/>
      <geom type="box" size="0.15 0.1 0.2"/>
      <geom type="sphere" size="0.1" pos="0 0 0.3"/>
      <site name="head" pos="0 0 0.45"/>
      <body name="lthigh" pos="0.1 0 -0.2" childclass="leg">
        <joint name="lhip_x" axis="1 0 0" pos="0 0 0.02"/>
        <joint name="lhip_y"/>
        <geom fromto="0 0 0 0 0.01 -0.4"/>
        <body name="lshin" pos="0 0.01 -0.45" axisangle="0 0 1 0.3">
          <joint name="lknee" pos="0 0 0.05" range="-2 0"/>
          <geom fromto="0 0 0 0 0 -0.4" size="0.04"/>
          <body name="lfoot" pos="0 0 -0.45">
            <joint name="lankle" type="ball" range="0 0.8"/>
            <geom type="box" size="0.1 0.05 0.02" pos="0.05 0 0"/>
            <site name="left_foot" pos="0.05 0 -0.02"/>
          </body>
        </body>
      </body>
      <body name="rthigh" pos="-0.1 0 -0.2" childclass="leg">
        <joint name="rhip" type="ball" limited="false"/>
        <geom fromto="0 0 0 0 0 -0.4"/>
        <body name="rshin" pos="0 0 -0.45">
          <joint name="rknee"/>
          <joint name="rslide" type="slide" axis="0 0 1" range="-0.05 0.05"/>
          <geom fromto="0 0 0 0.02 0 -0.4" size="0.04"/>
          <site name="right_foot" pos="0 0 -0.42"/>
        </body>
      </body>
      <body name="arm" pos="0 0.15 0.1" xyaxes="0 1 0 -1 0 0">
        <joint name="shoulder" axis="1 1 0" pos="0 0 0.05"/>
        <geom type="cylinder" fromto="0 0 0 0.3 0 0" size="0.03"/>
        <site name="hand" pos="0.3 0 0"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

INERTIAS = """
<mujoco model="inertias">
  <compiler angle="degree" eulerseq="zyx"/>
  <option gravity="0 0 -9.81" timestep="0.001"/>
  <worldbody>
    <body name="a" pos="0 0 1">
      <joint name="j0" type="hinge" axis="0 0 1" ref="10"/>
      <geom type="ellipsoid" size="0.1 0.2 0.3" pos="0.1 0 0" euler="10 20 30"/>
      <geom type="cylinder" size="0.05 0.2" pos="0 0.1 0" zaxis="1 1 0"/>
      <body name="b" pos="0.3 0 0" euler="30 0 -20">
        <joint name="j1" type="hinge" axis="1 0 0" range="-90 90"/>
        <inertial pos="0.1 0.02 0" mass="2" fullinertia="0.3 0.2 0.25 0.01 -0.02 0.03"/>
        <geom type="box" size="0.1 0.1 0.1" contype="0" conaffinity="0"/>
        <body name="c" pos="0 0 -0.3">
          <joint name="j2" type="slide" axis="0 1 0" ref="0.05"/>
          <inertial pos="0 0 -0.1" quat="0.9 0.1 0.2 0.3" mass="1.5" diaginertia="0.02 0.03 0.04"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.03" density="500"/>
          <body name="d" pos="0 0 -0.25" quat="0.7 0.7 0 0">
            <joint name="j3" type="ball" pos="0 0.01 0"/>
            <geom type="sphere" size="0.07" mass="0.8"/>
            <geom type="box" size="0.02 0.03 0.04" pos="0.1 0 0" euler="5 6 7"/>
            <site name="tip" pos="0.12 0 0" euler="0 90 0"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

ARM7 = """
<mujoco model="arm7">
  <compiler angle="degree"/>
  <default>
    <joint type="hinge" armature="0.1" damping="1" range="-170 170"/>
    <geom type="capsule" size="0.04" density="2000"/>
  </default>
  <worldbody>
    <body name="base" pos="0 0 0.1">
      <geom type="cylinder" size="0.08 0.05"/>
      <body name="l1" pos="0 0 0.1">
        <joint name="a1" axis="0 0 1"/>
        <geom fromto="0 0 0 0 0 0.3"/>
        <body name="l2" pos="0 0 0.3">
          <joint name="a2" axis="0 1 0" range="-120 120"/>
          <geom fromto="0 0 0 0 0 0.3"/>
          <body name="l3" pos="0 0 0.3">
            <joint name="a3" axis="0 0 1"/>
            <geom fromto="0 0 0 0.05 0 0.3"/>
            <body name="l4" pos="0.05 0 0.3">
              <joint name="a4" axis="0 -1 0" pos="0 0 0.01"/>
              <geom fromto="0 0 0 0 0 0.25"/>
              <body name="l5" pos="0 0 0.25">
                <joint name="a5" axis="0 0 1"/>
                <geom fromto="0 0 0 0 0 0.2"/>
                <body name="l6" pos="0 0 0.2">
                  <joint name="a6" axis="0 1 0"/>
                  <geom fromto="0 0 0 0 0 0.1"/>
                  <body name="l7" pos="0 0 0.1">
                    <joint name="a7" axis="0 0 1"/>
                    <geom type="box" size="0.04 0.04 0.02"/>
                    <site name="ee" pos="0 0 0.05"/>
                  </body>
                </body>
              </body>
            </body>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

TWO_TREES = """
<mujoco model="two_trees">
  <worldbody>
    <body name="box" pos="1 0 0.5">
      <joint type="free"/>
      <geom type="box" size="0.1 0.2 0.3"/>
    </body>
    <body name="pend" pos="0 0 2">
      <joint name="p1" type="ball"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
      <body name="pend2" pos="0 0 -0.5">
        <joint name="p2" type="hinge" axis="0 1 0"/>
        <joint name="p3" type="hinge" axis="1 0 0"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 -0.3" size="0.05"/>
        <site name="tip" pos="0.3 0 -0.3"/>
      </body>
    </body>
    <body name="slider" pos="0 1 0" zaxis="0 1 1">
      <joint name="s1" type="slide" axis="1 0 0"/>
      <joint name="s2" type="slide" axis="0 1 0"/>
      <geom type="sphere" size="0.1"/>
    </body>
  </worldbody>
</mujoco>
"""

CASES = {"branched": BRANCHED, "inertias": INERTIAS, "arm7": ARM7, "two_trees": TWO_TREES}
