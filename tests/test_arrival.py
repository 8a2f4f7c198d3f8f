"""Contacts that arrive at rest (``arrival=...`` of a contact-implicit solve without impulses), and ``colloc verify``'s
grazing arrivals, on problems/lowered_mass.py.

A mass lowered onto the ground without impulses: the event-driven simulator, which nobody tuned for these files,
is the oracle.  Without ``arrival`` the optimizer lands the mass at 0.54 m/s and stops it inside the next interval
(a force at every collocation point holds the gap at the points, not between them): the simulator started on the
file strikes the ground with an impulse the file lacks.  With it the mass arrives at rest, and a simulator started
on the file strikes the ground only as fast as the square-root law of a grazing contact allows for the file's own
gap error (``contact_checks._grazing``).  Where it rests loaded, a simulator impulse that stops the normal speed the
scheme leaves at a mesh point is excused only within the coordinates' error differentiated through the interval's
nodes (``contact_checks._stance``).
"""
import importlib

import numpy as np
import pytest

import colloc as cl
from colloc.cli import commands as cli
from colloc.errors import OptionError
from colloc.transcription.contacts import Arrival

from test_problems import load

contact_checks = importlib.import_module("colloc.simulate.contact_checks")


@pytest.fixture(scope="module")
def lowered():
    return load("lowered_mass")


@pytest.fixture(scope="module")
def arrived(lowered):
    return cl.solve(lowered.build(), **lowered.SOLVE)


@pytest.fixture(scope="module")
def struck(lowered):
    return cl.solve(lowered.build(), **{k: v for k, v in lowered.SOLVE.items() if k != "arrival"})


def _allowed(arrival, gap, force_before):
    """The approach speed the arrival rows allow, by their formula (Arrival's docstring)."""
    phi = np.maximum(gap, 0.0)
    return np.sqrt(2 * arrival.deceleration * phi) * (phi / (phi + arrival.reach)) ** 3 + arrival.relief * force_before**2 + arrival.speed


def test_without_arrival_the_mass_lands_at_speed_and_verify_finds_the_impulse_the_file_lacks(lowered, struck, tmp_path, capsys):
    tr = struck.trajectory
    assert struck.success
    y, v = tr["mass.y"], tr["mass.y_speed"]
    closed = np.flatnonzero(y < 1e-7)
    assert v[closed[0]] < -0.1  # the mesh point where the gap closes: still falling (0.54 m/s measured)
    assert tr.metadata.get("arrival") is None
    path = tmp_path / "struck.npz"
    tr.write(path)
    assert cli.main(["verify", str(path), lowered.__file__]) == 1
    report = capsys.readouterr().out
    failed = [line.split()[1] for line in report.splitlines() if line.strip().startswith("FAIL")]
    assert failed == ["impact"], report  # `impact times`: the simulator's impulse at the landing


def test_arrival_rows_hold_at_every_grid_point_and_the_mass_lands_at_rest(lowered, arrived):
    tr = arrived.trajectory
    assert arrived.success
    arrival = Arrival.of(lowered.SOLVE["arrival"])
    assert tr.metadata["arrival"] == arrival._asdict()
    y, v, lam = tr["mass.y"], tr["mass.y_speed"], tr["mass.ground.normal_force"]
    before = np.concatenate([[lam[0]], lam[:-1]])
    assert np.all(-v <= _allowed(arrival, y, before) + 1e-8)
    closed = np.flatnonzero(y < 1e-7)
    assert abs(v[closed[0]]) <= 1e-6  # it reaches the ground at rest
    assert closed[0] > 0 and y[closed[0] - 1] > 1e-4  # from the air: the rows did not keep it hovering
    # the rows cost effort: slowing down before the touch-down is dearer than the speed the struck file lands at
    assert arrived.objective > 30.0


def test_verify_passes_the_arrival_file_and_excuses_only_grazing_strikes(lowered, arrived, tmp_path, capsys):
    path = tmp_path / "arrived.npz"
    arrived.trajectory.write(path)
    assert cli.main(["verify", str(path), lowered.__file__]) == 0, capsys.readouterr().out
    checks, info = contact_checks.check_contact_file(lowered.build(), arrived.trajectory, 1e-6, 1e-2)
    assert all(c.passed for c in checks)
    sim = info["simulation"]
    assert sim["slight"], "the simulator started on the file strikes the ground as it grazes it"
    for e in sim["slight"]:
        # far faster than the speeds' tolerance (1e-6 m/s): only the grazing bound √(2|A|δφ) excuses it
        assert abs(e["speed"]) > 1e-5
        assert abs(e["time"] - 0.3) < 1e-3  # where the file lands
        assert e["excused"]["mass.y_speed"] >= abs(e["speed"])


def test_the_grazing_bound_is_the_square_root_law(lowered, arrived, tmp_path):
    """``_grazing``: a mass at rest on the ground under gravity, its height known to ``δφ``, strikes it at √(2 g δφ);
    a file that reaches the ground at speed gets no bound."""
    from colloc.simulate.events import ContactSystem

    system = ContactSystem(lowered.build().model)
    tr = arrived.trajectory
    k = int(np.flatnonzero(tr["mass.y"] < 1e-7)[-1])  # at rest on the ground at t_f, the thrust zero
    q, v, u, p = np.array([tr["mass.y"][k]]), np.array([0.0]), np.array([0.0]), np.zeros(0)
    at = (q, v, u, p, system.evaluate(float(tr.time[k]), q, v, u, p))
    tol = {"mass.y": 1e-6, "mass.y_speed": 1e-9}
    event = dict(time=float(tr.time[k]), contact="mass.ground")
    assert contact_checks._grazing(event, 0, at, system, tr, tol, 1e-9) == pytest.approx(np.sqrt(2 * lowered.GRAVITY * 1e-6) + 1e-9, rel=1e-9)
    tr.write(tmp_path / "moving.npz")
    moving = cl.Trajectory.read(tmp_path / "moving.npz")
    moving["mass.y_speed"][k] = -1e-3
    assert contact_checks._grazing(event, 0, at, system, moving, tol, 1e-9) is None


def test_the_differentiation_constant_of_the_schemes_nodes():
    """``Σ_i |ℓ_i'(end)|`` by closed forms: ``2/h`` for an interval's ends, ``8/h`` with its midpoint (Hermite–Simpson),
    and for Radau's three points with the start, ``ℓ_end'(1) = Σ_j 1/(1 − τ_j)`` and ``ℓ_i'(1) = Π_{j≠i,end}(1 − τ_j) /
    Π_{j≠i}(τ_i − τ_j)``."""
    h = 0.02
    assert contact_checks.differentiation_constant([0.3, 0.3 + h], 0.3 + h) == pytest.approx(2 / h, rel=1e-12)
    assert contact_checks.differentiation_constant([0.3, 0.3 + h / 2, 0.3 + h], 0.3 + h) == pytest.approx(8 / h, rel=1e-9)
    tau = np.array([0.0, (4 - np.sqrt(6)) / 10, (4 + np.sqrt(6)) / 10, 1.0])
    end = sum(1 / (1 - t) for t in tau[:-1])
    others = [np.prod([1 - tau[j] for j in range(3) if j != i]) / np.prod([tau[i] - tau[j] for j in range(4) if j != i]) for i in range(3)]
    assert contact_checks.differentiation_constant(0.3 + h * tau, 0.3 + h) == pytest.approx((end + sum(map(abs, others))) / h, rel=1e-9)


def test_an_impulse_inside_a_stance_is_bounded_by_the_coordinates_error_differentiated(lowered, arrived, tmp_path):
    """``_stance``: where the mass rests on the ground, loaded over the interval that ends at a mesh point, a simulator
    impulse there may stop a normal speed of ``Λ' δφ`` (its height known to ``δφ``, ``Λ'`` the differentiation
    constant of that interval's nodes); at the touch-down (the interval before unloaded), in flight, or with the gap
    open at the mesh point, no bound."""
    from colloc.discretization.interpolant import Interpolant
    from colloc.simulate.events import ContactSystem

    system = ContactSystem(lowered.build().model)
    tr = arrived.trajectory
    grid = Interpolant(tr).grid
    mesh = tr.time[grid.mesh_points]
    force = tr["mass.ground.normal_force"]
    m = int(np.argmin(np.abs(mesh - 0.6)))  # resting since 0.3
    landing = int(np.flatnonzero(force[grid.mesh_points] > 1e-3 * force.max())[0])  # the first loaded mesh point
    tol, budget = {"mass.y": 1e-6, "mass.y_speed": 1e-9}, {"floor": 1e-6}
    p = np.zeros(0)
    at = (None, None, None, p, None)

    def bound(k, traj=tr):
        return contact_checks._stance(dict(time=float(mesh[k]), contact="mass.ground"), 0, at, system, traj, budget, tol, 1e-9)

    nodes = tr.time[grid.nodes_of_intervals[m - 1]]
    assert bound(m) == pytest.approx(contact_checks.differentiation_constant(nodes, mesh[m]) * 1e-6 + 1e-9, rel=1e-6)
    assert 21.06 * 1e-6 / 0.05 == pytest.approx(bound(m), rel=1e-3)  # Radau's constant over h = 1/20 s
    assert bound(landing) is None  # its interval starts in flight: an arrival, judged by _grazing
    assert bound(landing - 2) is None  # in flight
    tr.write(tmp_path / "lifted.npz")
    lifted = cl.Trajectory.read(tmp_path / "lifted.npz")
    lifted["mass.y"][grid.mesh_points[m]] = 1e-5  # held 10 µm above the ground: beyond δφ, no stance there
    assert bound(m, lifted) is None


@pytest.mark.parametrize("arrival, words", [
    ({"decel": 1.0}, "keys among"),
    ({"deceleration": -1.0}, "`deceleration` must be a finite number > 0"),
    ({"reach": 0.0}, "`reach` must be a finite number > 0"),
    ({"speed": float("inf")}, "`speed` must be a finite number ≥ 0"),
    ({"relief": True}, "`relief` must be a finite number > 0"),
    ("soft", "must be a dict"),
])
def test_bad_arrival_is_one_sentence_naming_it(lowered, arrival, words):
    with pytest.raises(OptionError, match="arrival") as e:
        cl.solve(lowered.build(), **dict(lowered.SOLVE, arrival=arrival))
    assert words in str(e.value)


def test_arrival_needs_a_solve_without_impulses(lowered):
    with pytest.raises(OptionError, match="`arrival` .* needs `impacts=False`"):
        cl.solve(lowered.build(), **dict(lowered.SOLVE, impacts=True))
