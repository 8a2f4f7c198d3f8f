"""The schedule-free Solo12 trot with soft landings (problems/solo12_trot.py) against ``colloc verify`` and Pinocchio.

The file tests/data/solo12_trot_soft.npz is a solved stride (converged at ε = 1e-7), too long to solve here: the
stages of ``solo12_trot.SOFT`` from the script's standing guess with no contact schedule (18 graded intervals,
Hermite–Simpson, 29 CPU minutes), then ``FINE`` (radau-3, a force at every collocation point, 28 intervals of at
most 20 ms, clearance δ = 1e-8, converged at ε = 1e-6), then ``TOUCHDOWN`` (30 intervals: the two before the pairs'
touch-downs halved) from that file's resampled guess, ε 1e-4 → 1e-7 (1549 CPU s, J = 0.091567), then the stride
started on no foot about to strike the ground (``build(approach=...)``, ``solo12_stand.soft_start``: φ₀ = 1 mm, then
``START``'s 5 cm; 202 + 198 iterations, 262 + 246 CPU s): J = 0.091895, then every foot reaching the ground at rest
(``ARRIVE``, ``arrival``; 248 iterations, 664 CPU s): J = 0.092223, each run from the previous run's file.

It records the arguments of ``build`` that made its problem, so ``colloc verify FILE problems/solo12_trot.py``
re-builds that problem without ``--set``.  ``colloc verify`` judges the file by what nobody tuned for it: the
problem's rows re-evaluated, each interval integrated alone (scipy), the event-driven simulator's re-simulation of
the whole stride from the file's start with the file's torques.

Checked here:

* every check of ``colloc verify``, and a
  copy with one knee angle moved by 0.02 rad at one mesh point (a swing leg mid-stride) fails that state's
  per-interval check and its defects;
* by Pinocchio (the independent model): the feet's normal forces average to the weight m g over the periodic
  stride (the base's vertical momentum returns to its start), and a loaded foot does not move (its position stays
  within 10 µm of where it was loaded: no slide at touch-down, where the stride without soft landings slid 4 mm).
"""
import os
import re

import numpy as np
import pytest

import colloc as cl

from solo12_setup import solo12  # noqa: E402

pin, URDF = solo12()

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "solo12_trot_soft.npz")
SCRIPT = os.path.join(ROOT, "problems", "solo12_trot.py")
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
G, STRIDE, DURATION = 9.81, 0.1, 0.4


def _pinocchio_feet(model, traj):
    """The feet's positions (rows, 4, 3) by Pinocchio at every row of the file."""
    data = model.createData()
    q = np.zeros((traj.time.size, model.nq))
    for i, c in enumerate(("x", "y", "z", "qx", "qy", "qz", "qw")):
        q[:, i] = traj["solo12.base_" + c]
    for name in model.names[2:]:  # after the universe and the free flyer
        q[:, model.joints[model.getJointId(name)].idx_q] = traj["solo12." + name]
    feet = []
    for qk in q:
        pin.framesForwardKinematics(model, data, qk)
        feet.append([data.oMf[model.getFrameId(f)].translation.copy() for f in FEET])
    return np.array(feet)


def _simpson(t, y):
    """∫y dt by Simpson's rule on each Hermite–Simpson interval (mesh point, midpoint, mesh point)."""
    return sum((t[k + 2] - t[k]) / 6 * (y[k] + 4 * y[k + 1] + y[k + 2]) for k in range(0, t.size - 2, 2))


def test_soft_trot_carries_the_weight_on_feet_that_stay_put():
    model = pin.buildModelFromUrdf(URDF, pin.JointModelFreeFlyer())
    traj = cl.Trajectory.read(DATA)
    lam = np.array([traj[f"solo12.{f}.normal_force"] for f in FEET])
    # forces at the grid points (contact_forces="collocation"): Simpson's rule is the impulse the defects applied
    weight = pin.computeTotalMass(model) * G
    assert _simpson(traj.time, lam.sum(axis=0)) / DURATION == pytest.approx(weight, rel=2e-3)
    feet = _pinocchio_feet(model, traj)
    assert feet[..., 2].min() >= -1e-7
    for k in range(len(FEET)):
        loaded = np.flatnonzero(lam[k] > 1e-3 * weight)
        spans = np.split(loaded, np.flatnonzero(np.diff(loaded) > 1) + 1)
        for span in spans:  # each stance: the foot where it was loaded first, to 10 µm (STICKING's FL slid 4 mm)
            assert np.abs(feet[span, k, :2] - feet[span[0], k, :2]).max() <= 1e-5, (FEET[k], traj.time[span[0]])


def _verdicts(report):
    """``{check: passed}`` from ``colloc verify``'s report lines."""
    return {m.group(2): m.group(1) == "pass" for m in re.finditer(r"^\s+(pass|FAIL)\s+(\S+(?: times)?)\s", report, re.M)}


@pytest.mark.slow
def test_soft_trot_obeys_the_contact_law_and_a_tampered_copy_does_not(tmp_path, capsys):
    from colloc.cli import commands as cli

    cli.main(["verify", DATA, SCRIPT])
    report = capsys.readouterr().out
    verdicts = _verdicts(report)
    # the touch-downs arrive at rest (t = 0: soft_start's rows, T/2: arrival's); inside the stances the simulator stops the
    # normal speeds the scheme leaves at the mesh points (HL at 0.192 s: 2.5e-5 m/s) within the stance rule's Λ' δφ
    assert [c for c, v in verdicts.items() if not v] == [], verdicts
    assert re.search(r"pass\s+impact times .* \d+ simulated impact\(s\) the file lacks within the scheme's error", report), report
    assert {"contact", "resimulation", "newton", "dynamics:solo12.FR_KFE_speed", "between:soft_landing.HR_FOOT"} <= set(verdicts)
    assert all(v for c, v in verdicts.items() if c.startswith("boundary:")), verdicts  # the stride is periodic
    assert {f"boundary:soft_start.{f}" for f in FEET} <= set(verdicts)  # and starts on no foot about to strike
    traj = cl.Trajectory.read(DATA)
    from colloc.discretization.interpolant import Interpolant

    mesh = Interpolant(traj).grid.mesh_points
    k = int(mesh[np.argmin(np.abs(traj.time[mesh] - 0.3))])  # mid-swing of FR and HL
    traj["solo12.FR_KFE"][k] += 0.02
    moved = tmp_path / "moved.npz"
    traj.write(moved)
    assert cli.main(["verify", str(moved), SCRIPT]) == 1
    moved_verdicts = _verdicts(capsys.readouterr().out)
    assert verdicts["dynamics:solo12.FR_KFE"] and not moved_verdicts["dynamics:solo12.FR_KFE"]
    assert not moved_verdicts["defects"]  # the knee's own defect rows
