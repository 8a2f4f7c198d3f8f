"""The event-driven simulator through Solo12's take-off, its feet sliding under load, checked by Pinocchio.

The motion: tests/data/solo12_jump_implicit_8.csv, the schedule-free jump of problems/solo12_stand.py
(``build_jump()`` solved from ``jump_guess()`` with ``JUMP_SOLVE`` at 8 intervals, complementarity tolerance 1e-6,
IPOPT tol 1e-8: tests/test_solo12_contact.py's fixture).  From the file's state at the start of its push (its
third interval), the simulator follows the file's torques alone: the feet land on the ground they nearly touch,
stick, slide under load on their 4-facet cones (μ = 0.8) as the push peaks, and take off.  Nothing of it is
checked against colloc: Pinocchio gives the centre of mass and the centroidal momentum of the simulated states,
and the feet's sliding speeds.

* impulse and momentum: from the push's first stick to mid-flight, ``m Δv_com = ∫ Σ F dt + m g Δt`` (``F`` the
  simulator's foot forces, the ground's normal along z and tangents along x, y), the integral by the trapezoid
  rule on a fine output grid (error ``O(h² F'')``, measured 5e-6 N s, a tenth of the tolerance);
* flight: once every foot is off, the centre of mass falls freely, ``v_com(t) = v_com(t_off) + g (t − t_off)``,
  and the angular momentum about it is constant (Pinocchio's ``computeCentroidalMomentum``);
* Coulomb's law, polyhedral: where a foot slides (Pinocchio's foot speed), its friction lies on the cone's
  boundary and dissipates as much as any force of the cone can (maximal dissipation over the polygon's vertices).
"""
import os

import numpy as np
import pytest

import colloc as cl
from test_solo12_contact import URDF, _pinocchio_q, _script, pin

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "solo12_jump_implicit_8.csv")
FEET = ("FL", "FR", "HL", "HR")
G = 9.81

pytestmark = pytest.mark.slow  # one simulation of 0.24 s of Solo12, about 10 CPU s with its model


def _pinocchio_state(model, body, sim, k):
    """Pinocchio's (q, v) of the simulated row ``k`` (the free flyer's (v, ω) in the base frame in both)."""
    names = [s.name() for s in body.coordinates]
    speeds = [s.name() for s in body.speeds]
    q = _pinocchio_q(model, body, np.array([sim[n][k] for n in names]))
    v = np.zeros(model.nv)
    v[:6] = [sim[n][k] for n in speeds[:6]]
    for name in model.names[2:]:
        v[model.joints[model.getJointId(name)].idx_v] = sim[f"solo12.{name}_speed"][k]
    return q, v


@pytest.fixture(scope="module")
def takeoff():
    from colloc.discretization.interpolant import Interpolant
    from colloc.simulate.events import ContactSystem

    stand = _script("solo12_stand")
    problem = stand.build_jump()
    traj = cl.Trajectory.read(DATA)
    itp = Interpolant(traj)
    system = ContactSystem(problem.model)
    controls = {c.name: itp.control(c.name) for c in problem.model.controls}
    a = itp.grid.interval_starts[2]
    q0, v0 = ([traj[n][a] for n in group] for group in (system.coordinate_names, system.speed_names))
    t0 = float(traj.time[a])
    # a friction that flipped between two vertices at every step would spend this budget of events at once
    sim = cl.simulate_events(system, 0.45, q0, v0, controls=controls, parameters=traj.parameters or None, t0=t0,
                             times=np.linspace(t0, 0.45, 2001), gap_tolerance=1e-8, max_events=200)
    return stand.robot(), sim


def test_feet_slide_under_load_then_take_off(takeoff):
    _, sim = takeoff
    events = sim.metadata["events"]
    for f in FEET:
        kinds = [e["kind"] for e in events if e["contact"] == f"solo12.{f}_FOOT"]
        assert "slip" in kinds and kinds[-1] == "take-off", (f, kinds)
        slip = max(e["time"] for e in events if e["contact"] == f"solo12.{f}_FOOT" and e["kind"] == "slip")
        off = [e["time"] for e in events if e["contact"] == f"solo12.{f}_FOOT" and e["kind"] == "take-off"][0]
        between = (sim.time > slip) & (sim.time < off)
        assert sim[f"solo12.{f}_FOOT.normal_force"][between].min() > 0.0  # loaded while it slides


def test_momentum_of_the_push_and_the_flight_by_pinocchio(takeoff):
    body, sim = takeoff
    model = pin.buildModelFromUrdf(URDF, pin.JointModelFreeFlyer())
    data = model.createData()
    mass = pin.computeTotalMass(model)
    events = sim.metadata["events"]
    start = max(e["time"] for e in events if e["kind"] in ("impact", "closed"))  # the feet down, no impulse after
    off = max(e["time"] for e in events if e["kind"] == "take-off")
    # from the row after the last impact (an event has a row before and after it); a force that jumps at a later event
    # (slip, take-off) has its value before and after at the same time, so the trapezoid rule integrates it exactly
    rows = np.flatnonzero(sim.time >= start)[1:]
    assert sim.time[rows[0]] == start
    vcom, hg = [], []
    for k in rows:
        q, v = _pinocchio_state(model, body, sim, k)
        pin.centerOfMass(model, data, q, v)
        vcom.append(data.vcom[0].copy())
        hg.append(pin.computeCentroidalMomentum(model, data, q, v).angular.copy())
    vcom, hg, t = np.array(vcom), np.array(hg), sim.time[rows]
    force = sum(np.column_stack([sim[f"solo12.{f}_FOOT.friction_force_1"], sim[f"solo12.{f}_FOOT.friction_force_2"],
                                 sim[f"solo12.{f}_FOOT.normal_force"]])[rows] for f in FEET)
    gravity = np.array([0.0, 0.0, -mass * G])
    impulse = np.concatenate([np.zeros((1, 3)), np.cumsum(0.5 * np.diff(t)[:, None] * (force[1:] + force[:-1]), axis=0)])
    expected = mass * vcom[0] + impulse + np.outer(t - t[0], gravity)
    assert np.abs(force).max() > 0.5 * mass * G  # a push, not a rest
    np.testing.assert_allclose(mass * vcom, expected, atol=1e-5 * mass * G * (t[-1] - t[0]))
    flight = t >= off
    assert flight.sum() > 100
    np.testing.assert_allclose(vcom[flight], vcom[flight][0] + np.outer(t[flight] - t[flight][0], [0, 0, -G]), atol=1e-9)
    np.testing.assert_allclose(hg[flight], np.broadcast_to(hg[flight][0], hg[flight].shape), atol=1e-9)


def test_sliding_feet_obey_coulombs_polyhedral_law_by_pinocchio(takeoff):
    body, sim = takeoff
    model = pin.buildModelFromUrdf(URDF, pin.JointModelFreeFlyer())
    data = model.createData()
    vertices = 0.8 * np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])  # μ × the square cone's vertices
    sliding = 0
    for k in range(sim.time.size):
        q, v = _pinocchio_state(model, body, sim, k)
        pin.forwardKinematics(model, data, q, v)
        pin.updateFramePlacements(model, data)
        for f in FEET:
            lam = sim[f"solo12.{f}_FOOT.normal_force"][k]
            speed = pin.getFrameVelocity(model, data, model.getFrameId(f"{f}_FOOT"), pin.LOCAL_WORLD_ALIGNED).linear[:2]
            if lam <= 1e-6 or np.linalg.norm(speed) <= 1e-6:
                continue
            sliding += 1
            friction = np.array([sim[f"solo12.{f}_FOOT.friction_force_1"][k], sim[f"solo12.{f}_FOOT.friction_force_2"][k]])
            assert abs(friction).sum() == pytest.approx(0.8 * lam, rel=1e-9)  # on the square's boundary |f_x| + |f_y| = μλ
            best = -(lam * vertices @ speed).min()
            assert -friction @ speed == pytest.approx(best, rel=1e-6, abs=1e-9 * lam)  # as much as the best vertex
    assert sliding > 20
