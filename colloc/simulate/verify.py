"""Forward simulation of a solution: integrate the model with the solution's controls, compare the states.

A collocation solution satisfies the dynamics only at its collocation points.
Integrating the model from the solution's initial state with the solution's
controls (CasADi integrators, tolerances far below the collocation error)
shows how far the true response drifts from the collocated states, over time
and at the end.

Inputs are the solution's dense output (:mod:`colloc.discretization.interpolant`) written into
the integrator symbolically: on each mesh interval the polynomial through the control values at
the collocation points (the line between the interval's ends with ``control_interpolation="linear"``),
so nothing is held constant between samples.
Each interval is one integrator call on local time ``s ∈ [0, 1]``
(``dx/ds = h f``), started from the end of the previous one.

Form of the model:

* ``cvodes`` (ODE) when the residuals are affine in the derivatives (the model's
  ``mode="explicit"`` form, which covers explicit rows and multibody components)
  and no multiplier is algebraic;
* ``idas`` (index-1 DAE) otherwise: the derivatives of states with nonlinear
  implicit residuals are algebraic variables tied by their residual rows, and
  Lagrange multipliers of kinematic constraints are algebraic variables tied by
  the acceleration-level constraints (φ̈, ψ̇, α).  Position- and velocity-level
  constraints are then not enforced, so their drift is part of the reported
  error.  Multipliers that are not matched one-to-one by acceleration-level rows
  are taken from the solution, like controls.

Legend: ``s`` local time, ``h`` interval length, ``x`` states, ``z`` algebraic
variables of the integrator, ``u`` controls, ``lam`` multipliers, ``p`` parameters.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from ..errors import FileFormatError, ModelError, OptionError, did_you_mean
from ..discretization.interpolant import Interpolant, held
from ..viz.plot import _pyplot, save_figure
from ..results.trajectory import SolveResult, Trajectory
from ..transcription import make_options, point_function


def _check_columns(problem, trajectory):
    from .checks import check_columns

    check_columns(problem, trajectory)


def _point(problem):
    """The one-point function in explicit form when possible, and whether it is."""

    try:
        return point_function(problem, make_options(mode="explicit")) + (True,)
    except ModelError:
        return point_function(problem, make_options()) + (False,)


def _build(problem, itp, substeps, rtol, atol, forcing=None, forcing_nodes=False):
    """One integrator over a mesh interval on local time, and how to fill its parameter vector.

    ``forcing``, a CasADi Function ``(x, p, w) -> ẋ`` added to the model's right-hand side, with ``w`` one
    constant vector per interval (the contact forces of a contact-implicit file, constant on each interval),
    or with ``forcing_nodes`` the polynomial through its values at the collocation points
    (:meth:`Interpolant.value_expression`; forces at the collocation points), needs the explicit form of the model.
    """
    model = problem.model
    point, meta, explicit = _point(problem)
    nx, nu, nlam, npar = len(model.states), len(model.controls), len(model.multipliers), len(model.parameters)
    acc_rows = len(meta["acc_labels"])
    algebraic_lam = nlam > 0 and acc_rows == nlam
    nz = len(meta["z_names"])
    k, kv = itp.control_nodes.size, itp.value_nodes.size

    s = ca.SX.sym("s")
    x = ca.SX.sym("x", nx)
    z_dot = ca.SX.sym("zdot", nz)
    t0, h = ca.SX.sym("t0"), ca.SX.sym("h")
    U = ca.SX.sym("U", nu, k)
    p = ca.SX.sym("p", npar)
    u = itp.control_expression(U, s) if nu else ca.SX(0, 1)  # the dense output, written symbolically
    if algebraic_lam:
        lam, LAM = ca.SX.sym("lam", nlam), ca.SX(nlam, 0)
    else:
        LAM = ca.SX.sym("LAM", nlam, kv)
        lam = itp.value_expression(LAM, s) if nlam else ca.SX(0, 1)
    xdot, res, _, acc, _ = point(t0 + s * h, x, z_dot, u, lam, p)
    nw = forcing.size1_in(2) if forcing is not None else 0
    w = ca.SX.sym("w", nw, kv if forcing_nodes else 1)
    if forcing is not None:
        if not explicit:
            raise ModelError(f"The model of `{problem.name}` has no explicit form: its contact forces cannot be integrated.")
        xdot = xdot + forcing(x, p, itp.value_expression(w, s) if forcing_nodes and nw else w)
    alg = [res] if nz else []
    if algebraic_lam:
        alg.append(acc)
    z = ca.vertcat(z_dot, lam) if algebraic_lam else z_dot
    dae = {"t": s, "x": x, "p": ca.vertcat(t0, h, ca.vec(U), ca.vec(LAM), p, ca.vec(w)), "ode": h * xdot}
    if z.numel():
        dae.update(z=z, alg=ca.vertcat(*alg))
    plugin = "idas" if z.numel() else "cvodes"
    grid = np.linspace(0.0, 1.0, substeps + 1)[1:]
    opts = {"abstol": atol, "reltol": rtol, "max_num_steps": 100000}
    if algebraic_lam:
        # the multipliers follow from the states at every time (index 1): their error is the states', and held to
        # `atol` themselves (a weld's force of 1e3 N to 1e-12 N, below round-off) IDAS could not step
        opts["suppress_algebraic"] = True
    integ = ca.integrator("simulate", plugin, dae, 0.0, grid, opts)
    form = dict(plugin=plugin, explicit=explicit, algebraic_multipliers=algebraic_lam,
                z_names=meta["z_names"], num_z=int(z.numel()))
    return integ, form


def _interval_inputs(problem, itp, form, traj, forcing_inputs=None, control_ends=None):
    """The integrator's parameter vector and algebraic start values of every interval at once.

    ``forcing_inputs`` (shape ``(num_w, n)``, or ``(num_w * num_collocation, n)`` stacked node by node with
    forces at the collocation points) are the forcing's values per interval; ``control_ends``
    ``{control: values (n,)}`` the control each interval ends on where it differs from the mesh point's
    (free steps: a push may jump there).

    Returns ``P`` shape ``(num_p, n)`` and ``Z0`` shape ``(num_z, n)``: one gather per column for the whole
    file (gathering per interval made a file of a million intervals quadratic).
    """
    model = problem.model
    n, starts = itp.num_intervals, itp.grid.interval_starts

    def nodes(name, cols):
        out = itp.nodes(name)[:, cols]
        if control_ends and name in control_ends and cols[-1] == itp.scheme.num_nodes - 1:
            out[:, -1] = control_ends[name]
        return out

    def at_nodes(names, cols):  # (len(names) * cols.size, n), column-major within an interval as `ca.vec` stacks it
        blocks = [nodes(name, cols) for name in names]     # each (n, cols.size)
        return np.stack(blocks, axis=0).transpose(2, 0, 1).reshape(len(names) * cols.size, n) if blocks else np.zeros((0, n))

    lam_names = [v.name for v in model.multipliers]
    U = at_nodes([v.name for v in model.controls], itp.control_nodes)
    LAM = np.zeros((0, n)) if form["algebraic_multipliers"] else at_nodes(lam_names, itp.value_nodes)
    params = np.array([traj.parameters[v.name] for v in model.parameters]).reshape(-1, 1)
    W = np.zeros((0, n)) if forcing_inputs is None else np.asarray(forcing_inputs, dtype=float).reshape(-1, n)
    P = np.concatenate([itp.mesh_times[None, :-1], itp.h[None, :], U, LAM, np.repeat(params, n, axis=1), W], axis=0)
    z_names = list(form["z_names"]) + (lam_names if form["algebraic_multipliers"] else [])
    Z0 = np.array([traj[name][starts] for name in z_names]).reshape(len(z_names), n) if form["num_z"] else np.zeros((0, n))
    return P, Z0


def simulate_controls(problem, trajectory, substeps=10, rtol=1e-12, atol=1e-12, initial=None) -> dict:
    """Integrate ``problem``'s model with ``trajectory``'s controls and compare states.

    Parameters
    ----------
    problem : Problem
        The problem the trajectory solves (same names).
    trajectory : Trajectory
        A solution from ``colloc.solve`` or ``Trajectory.read`` (it needs its
        scheme in the metadata and the ``NAME.dot`` columns).
    substeps : int
        Output times per mesh interval (equally spaced in the interval).
    rtol, atol : float
        Integrator tolerances.
    initial : dict of str -> float, optional
        Start states to use instead of the trajectory's first row (multi-phase
        verification starts a phase where the jump map put the previous one).

    Returns
    -------
    dict
        ``time`` ndarray, shape (num_samples,): the start and ``substeps``
        times per interval;
        ``states`` dict name -> ndarray, shape (num_samples,): simulated states;
        ``collocated`` dict name -> ndarray: the trajectory's states there (its interpolant);
        ``errors`` dict name -> ndarray: ``|simulated − collocated|`` per state;
        ``error_over_time`` ndarray, shape (num_samples,): the largest absolute state error at each time;
        ``final_error`` float: ``error_over_time`` at the final time;
        ``max_error`` float; ``integrator`` (``"cvodes"`` or ``"idas"``);
        ``success`` bool and ``message`` (a failed integration leaves NaN after the failure).
    """
    _check_columns(problem, trajectory)
    model = problem.model
    itp = Interpolant(trajectory)
    integ, form = _build(problem, itp, substeps, rtol, atol)
    names = [v.name for v in model.states]
    s_out = np.linspace(0.0, 1.0, substeps + 1)
    collocated = itp.states(names, s_out)[0]                     # (nx, n, substeps + 1)
    x = np.array([(initial or {}).get(n, trajectory[n][0]) for n in names])
    n = itp.num_intervals
    sim = np.full((len(names), n, substeps), np.nan)
    success, message = True, "integrated over the whole horizon"
    P, Z0 = _interval_inputs(problem, itp, form, trajectory)
    for k in range(n):
        args = dict(x0=x, p=P[:, k])
        if form["num_z"]:
            args["z0"] = Z0[:, k]
        try:
            out = integ(**args)
        except RuntimeError as e:
            success, message = False, f"the integrator failed in interval {k} (t = {itp.mesh_times[k]:.6g}): {str(e).splitlines()[-1]}"
            break
        sim[:, k, :] = np.asarray(out["xf"]).reshape(len(names), substeps)
        x = sim[:, k, -1]
    time = np.concatenate([itp.times(s_out)[0, :1], itp.times(s_out[1:]).ravel()])
    start_state = np.array([(initial or {}).get(n, trajectory[n][0]) for n in names]).reshape(-1, 1)
    sim_flat = np.concatenate([start_state, sim.reshape(len(names), -1)], axis=1)
    col_flat = np.concatenate([collocated[:, 0, :1], collocated[:, :, 1:].reshape(len(names), -1)], axis=1)
    err = np.abs(sim_flat - col_flat)
    over_time = err.max(axis=0) if names else np.zeros(time.size)
    return dict(
        time=time, states=dict(zip(names, sim_flat)), collocated=dict(zip(names, col_flat)), errors=dict(zip(names, err)),
        error_over_time=over_time, final_error=float(over_time[-1]), max_error=float(np.max(over_time)),
        integrator=form["plugin"], success=success, message=message,
    )


def interval_errors(problem, traj, rtol=1e-10, atol=1e-10, contact=None, signed=False):
    """Each mesh interval integrated alone from the file's state at its start; the error at its end.

    ``contact`` (:func:`colloc.simulate.contact_checks.interval_contact`) adds what a contact-implicit file
    holds: ``forcing``, its ``inputs`` per interval (per collocation point with ``forcing_nodes``), the
    ``control_ends`` and the ``targets`` each interval must end on (the pre-impact states where an impulse
    acts); ``signed=True`` returns ``x_sim − x_file``.

    Returns
    -------
    errors : dict of str -> ndarray, shape (num_intervals,)
        ``|x_sim(t_{k+1}) − x_file(t_{k+1})|`` per state; NaN from an interval whose integration failed.
    mesh_times : ndarray, shape (num_intervals + 1,)
    message : str
    """
    _check_columns(problem, traj)
    model = problem.model
    itp = Interpolant(traj)
    contact = contact or {}
    integ, form = _build(problem, itp, 1, rtol, atol, contact.get("forcing"), contact.get("forcing_nodes", False))
    names = [v.name for v in model.states]
    n = itp.num_intervals
    starts, ends = itp.grid.interval_starts, itp.grid.interval_ends
    X = np.array([traj[name] for name in names]).reshape(len(names), -1)
    target = contact.get("targets", X[:, ends])
    errors, message = np.full((len(names), n), np.nan), "every interval integrated"
    P, Z0 = _interval_inputs(problem, itp, form, traj, contact.get("inputs"), contact.get("control_ends"))
    args = dict(x0=X[:, starts], p=P)
    if form["num_z"]:
        args["z0"] = Z0
    try:  # every interval at once (they are independent); on a failure, one by one to name it
        ends_all = np.asarray(integ.map(n)(**args)["xf"]).reshape(len(names), n)
        errors = (ends_all - target) if signed else np.abs(ends_all - target)
        return dict(zip(names, errors)), itp.mesh_times, message
    except RuntimeError:
        pass
    for k in range(n):
        args = dict(x0=X[:, starts[k]], p=P[:, k])
        if form["num_z"]:
            args["z0"] = Z0[:, k]
        try:
            end = np.asarray(integ(**args)["xf"]).reshape(len(names), -1)[:, -1]
        except RuntimeError as e:
            message = f"the integrator failed in interval {k} (t = {itp.mesh_times[k]:.6g}): {str(e).splitlines()[-1]}"
            continue
        errors[:, k] = (end - target[:, k]) if signed else np.abs(end - target[:, k])
    return dict(zip(names, errors)), itp.mesh_times, message


def verify(problem, trajectory, figure=None, tolerance=None, dynamics_tolerance=None, **options) -> dict:
    """Forward-simulate a solution given as a Trajectory or a file; optionally save the figure.

    Parameters
    ----------
    problem : Problem
    trajectory : Trajectory, SolveResult or path (``.csv``/``.npz``)
    figure : path, optional
        Where to save :func:`plot_simulation` (suffix picks the format, e.g. ``.png``).
    tolerance, dynamics_tolerance : float, optional
        Of the solution checks (:func:`colloc.simulate.checks.check_solution`; defaults there).  Without
        ``dynamics_tolerance`` each interval integrated alone is held to the local error the file's solve
        estimated, when the file records it (:func:`colloc.simulate.error_bounds.interval_limits`; then
        ``dynamics_limits`` in the result); else to the default relative tolerance.
    **options
        Passed to :func:`simulate_controls` (``substeps``, ``rtol``, ``atol``).

    Returns
    -------
    dict
        As :func:`simulate_controls`, plus ``figure`` (the saved path or None) and ``checks``
        (list of :class:`colloc.simulate.checks.Check`) and ``verified``: the integration succeeded and
        every check passed (``success`` says only that the integration went through).
    """
    from .checks import DYNAMICS_TOLERANCE, TOLERANCE, check_solution
    from .limits import checks as between_grid_points
    from .consistency import with_consistency_checks
    from .error_bounds import interval_limits

    if isinstance(trajectory, SolveResult):
        trajectory = trajectory.trajectory
    elif not isinstance(trajectory, Trajectory):
        trajectory = Trajectory.read(trajectory)
    if held(trajectory):  # its dense output integrates, but no check here is its own
        raise OptionError("A midpoint-vi solution has no collocation defects or interval errors to check; re-simulate it "
                          "with colloc.simulate_controls or colloc.simulate instead.")
    sim = simulate_controls(problem, trajectory, **options)
    sim["figure"] = None
    tolerance = TOLERANCE if tolerance is None else tolerance
    limits = interval_limits(problem, trajectory, tolerance) if dynamics_tolerance is None else None
    sim["dynamics_limits"] = limits
    dynamics_tolerance = DYNAMICS_TOLERANCE if dynamics_tolerance is None else dynamics_tolerance
    checks = check_solution(problem, trajectory, tolerance, limits or dynamics_tolerance, interval_errors)
    sim["checks"] = with_consistency_checks(problem, trajectory, checks, tolerance, dynamics_tolerance)
    if all(c.passed for c in sim["checks"][:3]):  # time, horizon, finite: the interpolant can be evaluated
        sim["checks"] += between_grid_points(problem, trajectory)
    sim["verified"] = sim["success"] and all(c.passed for c in sim["checks"])
    if figure is not None:
        sim["figure"] = save_figure(plot_simulation(sim), figure, close=True)
    return sim


def report(simulation) -> str:
    """A few lines: integrator, largest and final error in total and per state."""
    sim = simulation
    lines = [f"forward simulation ({sim['integrator']}): {sim['message']}",
             f"  final state error  {sim['final_error']:.3e}   largest over time  {sim['max_error']:.3e}"]
    for name, e in sim["errors"].items():
        lines.append(f"  {name:30s} final {e[-1]:.3e}   largest {np.max(e):.3e}")
    return "\n".join(lines)


def plot_simulation(simulation, names=None):
    """States simulated (solid) against collocated (dashed), and the error over time (log scale).

    Parameters
    ----------
    simulation : dict
        The result of :func:`simulate_controls`.
    names : list of str, optional
        States to draw (default: all).

    Returns
    -------
    matplotlib.figure.Figure
        One subplot per state and a last one titled ``state error`` with the
        absolute error of every state and their maximum.
    """
    plt = _pyplot()
    sim = simulation
    names = list(sim["states"]) if names is None else list(names)
    for name in names:
        if name not in sim["states"]:
            raise FileFormatError(f"No simulated state `{name}`.{did_you_mean(name, sim['states'])}")
    fig, axes = plt.subplots(len(names) + 1, 1, figsize=(7, 2.2 * (len(names) + 1)), sharex=True, squeeze=False)
    t = sim["time"]
    for ax, name in zip(axes[:, 0], names):
        ax.plot(t, sim["collocated"][name], "--", label="collocated")
        ax.plot(t, sim["states"][name], "-", label="simulated")
        ax.set_title(name)
    axes[0, 0].legend(loc="best")
    ax = axes[-1, 0]
    tiny = np.finfo(float).tiny
    for name in names:
        ax.semilogy(t, np.maximum(sim["errors"][name], tiny), lw=0.8, label=name)
    ax.semilogy(t, np.maximum(sim["error_over_time"], tiny), "k", lw=1.5, label="max")
    ax.set_title("state error")
    ax.set_xlabel("time")
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    return fig
