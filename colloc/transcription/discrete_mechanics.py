"""Discrete mechanics: the midpoint variational integrator, as a simulator and as a transcription.

For a Lagrangian model (every state belongs to a :class:`~colloc.Multibody`
with ``kinetic_energy`` and ``N = I``), one interval ``[t_k, t_{k+1}]`` of
length ``h`` gets the midpoint discrete Lagrangian and forcing

    L_d(q_k, q_{k+1}) = h L(q̄, Δq/h, t_k + h/2),   q̄ = (q_k + q_{k+1})/2,  Δq = q_{k+1} − q_k,
    f_d = h f(q̄, Δq/h, u_k, t_k + h/2),            u_k piecewise constant,

split into ``f⁻_k = f⁺_k = f_d/2`` (``forcing="midpoint"``, the default: DMOC's
midpoint rule, second order in q and in the momenta) or ``f⁻_k = f_d,
f⁺_k = 0`` (``forcing="trep"``: trep's MidpointVI, whose momenta lag by
``h f/2`` and whose configurations are first order when ``f ≠ 0``).  The
discrete Legendre transforms of an interval are

    P⁻_k = −D₁L_d(q_k, q_{k+1}) − f⁻_k,    P⁺_k = D₂L_d(q_k, q_{k+1}) + f⁺_k,

and the discrete Euler–Lagrange (DEL) equations at an interior node, with
holonomic constraints ``φ(q, t) = 0`` and colloc's sign of λ (``+Gᵀλ`` is the
constraint force, ``G = Φ_q``), are

    P⁺_{k−1} − P⁻_k + w_k G(q_k)ᵀ λ_k = 0,   φ(q_k) = 0,   w_k = (h_{k−1} + h_k)/2.

The momentum at node k is ``p_k = P⁻_k − (h_k/2) Gᵀλ_k = P⁺_{k−1} + (h_{k−1}/2) Gᵀλ_k``;
the boundary conditions on the speeds are these transforms at ``k = 0`` and
``k = N`` (with ``φ̇(q, v) = 0`` imposed there to fix λ_0 and λ_N), and the
speeds are ``v_k = M(q_k)⁻¹ (p_k − ∂L/∂v(q_k, 0))`` (kinetic energy quadratic
in the speeds).  trep writes the constraint force ``−Dh(q_k)ᵀλ_k`` with its
own sign and no step factor; the weight ``w_k`` here makes λ_k approximate
the continuous multiplier (second order at interior nodes; the end values
λ_0, λ_N, fixed by half-weight impulses, are first order).

References: Marsden & West, Acta Numerica 10 (2001) 357–514; Ober-Blöbaum,
Junge & Marsden, ESAIM:COCV 17 (2011) 322–352 (DMOC); Leyendecker,
Ober-Blöbaum, Marsden & Ortiz, Optim. Control Appl. Meth. 31 (2010) 505–528
(constraints); Johnson & Murphey, IEEE T-RO 25 (2009) (trep's ``MidpointVI``).

:class:`MidpointVI` holds the discrete equations as CasADi Functions;
:func:`simulate` steps them with Newton's method (a CasADi ``rootfinder``,
differentiable by the implicit function theorem, see
:meth:`MidpointVI.step_derivatives`); :mod:`colloc.transcription.midpoint_vi`
transcribes a :class:`~colloc.Problem` with them (``colloc.solve(...,
scheme="midpoint-vi")``).  Prescribed ("kinematic") coordinates are
not supported.

Legend: ``q`` coordinates, ``v`` speeds, ``p`` momenta (``par`` parameters),
``u`` controls, ``lam`` multipliers, ``t`` time, ``h`` step, ``w`` constraint
impulse weight.
"""
from __future__ import annotations


import casadi as ca
import numpy as np

from ..errors import ConvergenceError, did_you_mean, ModelError, OptionError
from ..model.named_values import named_vector as _named
from ..model.named_values import vector as _array
from ..model.component import TIME, Model
from ..model.multibody import Multibody
from ..model.problem import Problem
from ..results.trajectory import Trajectory

SCHEME = "midpoint-vi"
FORCING = ("midpoint", "trep")


def _as_model(model_or_body):
    if isinstance(model_or_body, Problem):
        return model_or_body.model
    if isinstance(model_or_body, Model):
        return model_or_body
    return Model(model_or_body)


class MidpointVI:
    """The midpoint discrete mechanics of a Lagrangian model.

    Parameters
    ----------
    model : Multibody, list of components, Model or Problem
        Every state must belong to a Multibody given by ``kinetic_energy``
        (and optionally ``potential_energy``, ``generalized_force``) with
        ``N = I``; other components may declare controls and parameters only.
        Constraints must be holonomic.
    forcing : {"midpoint", "trep"}
        Split of the discrete forcing (module docstring).

    Attributes
    ----------
    coordinate_names, speed_names, control_names, multiplier_names, parameter_names : list of str
    constraint_names : list of str
        One label per row of φ (``body.rod`` or ``body.rod[i]``).
    """

    def __init__(self, model, forcing="midpoint"):
        if forcing not in FORCING:
            raise OptionError(f"Unknown forcing `{forcing}`.{did_you_mean(forcing, FORCING)} Choose one of: {', '.join(FORCING)}.")
        self.model = model = _as_model(model)
        self.forcing = forcing
        bodies = _lagrangian_bodies(model)
        self.q = ca.vertcat(*[b.q for b in bodies])
        self.v = ca.vertcat(*[b.v for b in bodies])
        self.coordinate_names = [model.lookup(s).name for b in bodies for s in b.coordinates]
        self.speed_names = [model.lookup(s).name for b in bodies for s in b.speeds]
        self.control_names = [v.name for v in model.controls]
        self.parameter_names = [v.name for v in model.parameters]
        self.u, self.par = model.vector("control"), model.vector("parameter")
        self.L = sum((b.kinetic_energy - (b.potential_energy if b.potential_energy is not None else 0)) for b in bodies)
        self.f = ca.vertcat(*[b.generalized_force if b.generalized_force is not None else ca.SX.zeros(b.num_speeds, 1) for b in bodies])
        self._constraints(model)
        self._check_symbols()
        self._build()

    # -- set-up --------------------------------------------------------------------------------
    def _constraints(self, model):
        phi, names, forced, lams = [], [], [], []
        for k in model.constraints:
            if k.kind != "holonomic":
                raise ModelError(f"Constraint `{k.name}` is {k.kind}; the midpoint variational integrator handles holonomic constraints only.")
            n = int(k.position.numel())
            phi.append(k.position)
            names += [k.name if n == 1 else f"{k.name}[{i}]" for i in range(n)]
            if k.multipliers:
                forced.append(k.position)
                lams += k.multipliers
        extra = [m.name for m in model.multipliers if m not in lams]
        if extra:
            raise ModelError(f"Multiplier `{extra[0]}` belongs to no holonomic constraint; the midpoint variational integrator has no place for it.")
        self.phi = ca.vertcat(*phi) if phi else ca.SX(0, 1)
        self.constraint_names = names
        self.lam = ca.vertcat(*[m.symbol for m in lams]) if lams else ca.SX(0, 1)
        self.multiplier_names = [m.name for m in lams]
        self.G = ca.jacobian(ca.vertcat(*forced), self.q) if forced else ca.SX(0, self.q.numel())
        velocity = [k.velocity for k in model.constraints if k.multipliers]
        self.phi_dot = ca.vertcat(*velocity) if velocity else ca.SX(0, 1)
        self.velocity_names = [f"{n}.dot" for k in model.constraints if k.multipliers
                               for n in ([k.name] if k.position.numel() == 1 else [f"{k.name}[{i}]" for i in range(k.position.numel())])]

    def _check_symbols(self):
        allowed = {s.name() for s in ca.symvar(ca.vertcat(self.q, self.v, self.u, self.par, TIME))}
        for what, expr in (("Lagrangian", self.L), ("generalized force", self.f), ("constraint", self.phi)):
            for s in ca.symvar(ca.SX(expr)):
                if s.name() not in allowed:
                    raise ModelError(f"The {what} of the midpoint variational integrator uses `{s.name()}`, which is not a coordinate, speed, control, parameter or time.")
        M = ca.hessian(self.L, self.v)[0]
        if ca.depends_on(M, self.v):
            raise ModelError("The midpoint variational integrator needs a kinetic energy quadratic in the speeds (∂²L/∂v² independent of v).")

    def _build(self):
        q, v, u, par, t = self.q, self.v, self.u, self.par, TIME
        nq = q.numel()
        q1, q2 = ca.SX.sym("q1", nq), ca.SX.sym("q2", nq)
        t1, h = ca.SX.sym("t1"), ca.SX.sym("h")
        mid = [0.5 * (q1 + q2), (q2 - q1) / h, t1 + 0.5 * h]
        Ld = h * ca.substitute([self.L], [ca.vertcat(q, v, t)], [ca.vertcat(*mid)])[0]
        fd = h * ca.substitute([self.f], [ca.vertcat(q, v, t)], [ca.vertcat(*mid)])[0]
        fm, fp = (0.5 * fd, 0.5 * fd) if self.forcing == "midpoint" else (fd, ca.SX.zeros(nq, 1))
        self.interval = ca.Function("interval", [q1, q2, t1, h, u, par],
                                    [-ca.gradient(Ld, q1) - fm, ca.gradient(Ld, q2) + fp, mid[0], mid[1], mid[2]],
                                    ["q1", "q2", "t1", "h", "u", "par"], ["Pm", "Pp", "qm", "vm", "tm"])
        pv = ca.gradient(self.L, v)
        M = ca.jacobian(pv, v)
        b = ca.substitute(pv, v, ca.DM.zeros(v.shape))
        pk, lam = ca.SX.sym("p", nq), self.lam
        GTlam = ca.mtimes(self.G.T, lam)
        self.node = ca.Function("node", [q, lam, t, par], [self.phi, GTlam], ["q", "lam", "t", "par"], ["phi", "GTlam"])
        self.velocity = ca.Function("velocity", [q, pk, t, par], [ca.solve(M, pk - b)], ["q", "p", "t", "par"], ["v"])
        self.momentum = ca.Function("momentum", [q, v, t, par], [pv], ["q", "v", "t", "par"], ["p"])
        self.energy = ca.Function("energy", [q, v, t, par], [ca.dot(pv, v) - self.L], ["q", "v", "t", "par"], ["E"])
        self.constraint_rate = ca.Function("constraint_rate", [q, v, t, par], [self.phi_dot], ["q", "v", "t", "par"], ["phi_dot"])
        # continuous accelerations, for the derivative columns of a trajectory: M a = ∂L/∂q + f + Gᵀλ − (∂p/∂q) v − ∂p/∂t
        rhs = ca.gradient(self.L, q) + self.f + GTlam - ca.jtimes(pv, q, v) - ca.jacobian(pv, t)
        self.acceleration = ca.Function("acceleration", [q, v, u, lam, t, par], [ca.solve(M, rhs)], ["q", "v", "u", "lam", "t", "par"], ["a"])
        # λ at the last node from φ̇(q_N, v_N) = 0 with p_N = P⁺ + c Gᵀλ (linear in λ)
        c = ca.SX.sym("c")
        Minv_GT = ca.solve(M, self.G.T)
        vfree = ca.solve(M, pk - b)
        phid_free = ca.substitute(self.phi_dot, v, vfree)
        A = c * ca.mtimes(self.G, Minv_GT)
        self.end_multiplier = ca.Function("end_multiplier", [q, pk, c, t, par], [-ca.solve(A, phid_free)] if lam.numel() else [ca.SX(0, 1)],
                                          ["q", "p", "c", "t", "par"], ["lam"])

    @property
    def num_coordinates(self) -> int:
        return int(self.q.numel())

    @property
    def num_multipliers(self) -> int:
        return int(self.lam.numel())

    # -- one step ------------------------------------------------------------------------------
    def step_residual(self):
        """``(z, q1, p1, u1, t1, t2, c, par) -> r`` with ``z = [q2; lam1]``.

        ``r = [P⁻(q1, q2) − p1 − c G(q1)ᵀ lam1; φ(q2, t2)]``: the DEL equation
        solved for ``q2`` given the momentum ``p1`` that arrives at ``q1``
        (``P⁺`` of the previous step, or the initial momentum) and the weight
        ``c`` of the constraint impulse at ``q1``.
        """
        if getattr(self, "_residual", None) is None:
            nq, m, nu, npar = self.num_coordinates, self.num_multipliers, self.u.numel(), self.par.numel()
            z, q1, p1 = ca.SX.sym("z", nq + m), ca.SX.sym("q1", nq), ca.SX.sym("p1", nq)
            u1, t1, t2, c, par = ca.SX.sym("u1", nu), ca.SX.sym("t1"), ca.SX.sym("t2"), ca.SX.sym("c"), ca.SX.sym("par", npar)
            q2, lam = z[:nq], ca.reshape(z[nq:], m, 1)
            Pm = self.interval(q1, q2, t1, t2 - t1, u1, par)[0]
            GTlam = self.node(q1, lam, t1, par)[1]
            phi2 = self.node(q2, lam, t2, par)[0]
            r = ca.vertcat(Pm - p1 - c * GTlam, phi2)
            self._residual = ca.Function("del_step", [z, q1, p1, u1, t1, t2, c, par], [r], ["z", "q1", "p1", "u1", "t1", "t2", "c", "par"], ["r"])
        return self._residual

    def step_function(self, tolerance=1e-12, max_iterations=50):
        """``(q1, p1, u1, t1, t2, c, par, lam_guess) -> (q2, p2, lam1)`` by Newton's method.

        A CasADi ``rootfinder`` ("newton", ``abstol=tolerance``); its outputs
        are differentiable (implicit function theorem).  ``p2 = P⁺(q1, q2)``.
        """
        key = (float(tolerance), int(max_iterations))
        cache = self.__dict__.setdefault("_steps", {})
        if key in cache:
            return cache[key]
        res = self.step_residual()
        rf = ca.rootfinder("del_newton", "newton", res, {"abstol": tolerance, "abstolStep": 0.0, "max_iter": int(max_iterations)})
        nq, m, nu, npar = self.num_coordinates, self.num_multipliers, self.u.numel(), self.par.numel()
        q1, p1, u1 = ca.MX.sym("q1", nq), ca.MX.sym("p1", nq), ca.MX.sym("u1", nu)
        t1, t2, c, par, lam0 = ca.MX.sym("t1"), ca.MX.sym("t2"), ca.MX.sym("c"), ca.MX.sym("par", npar), ca.MX.sym("lam_guess", m)
        v1 = self.velocity(q1, p1, t1, par)
        z = rf(ca.vertcat(q1 + (t2 - t1) * v1, lam0), q1, p1, u1, t1, t2, c, par)
        q2, lam1 = z[:nq], ca.reshape(z[nq:], m, 1)
        p2 = self.interval(q1, q2, t1, t2 - t1, u1, par)[1]
        f = ca.Function("midpoint_vi_step", [q1, p1, u1, t1, t2, c, par, lam0], [q2, p2, lam1],
                        ["q1", "p1", "u1", "t1", "t2", "c", "par", "lam_guess"], ["q2", "p2", "lam1"])
        cache[key] = f
        return f

    def step(self, q1, p1, u1=None, t1=0.0, t2=None, parameters=None, weight=None, lam_guess=None, tolerance=1e-12, max_iterations=50):
        """Advance ``(q1, p1)`` to ``(q2, p2)``; returns ``(q2, p2, lam1)`` as numpy arrays.

        ``p1`` is the momentum arriving at ``q1`` (trep's ``p1``); ``weight``
        is the constraint impulse weight at ``q1`` (default ``t2 − t1``, an
        interior node of a uniform mesh).  Raises :class:`ConvergenceError` if
        Newton's method does not reach ``tolerance``.
        """
        args = self._step_args(q1, p1, u1, t1, t2, parameters, weight, lam_guess)
        return _step(self, *args, tolerance, max_iterations)

    def step_derivatives(self, q1, p1, u1=None, t1=0.0, t2=None, parameters=None, weight=None, lam_guess=None, tolerance=1e-12):
        """First derivatives of one step by the implicit function theorem.

        Returns
        -------
        dict of str -> ndarray
            ``q2_dq1``, ``q2_dp1`` (nq, nq), ``q2_du1`` (nq, nu) and the same for
            ``p2`` (trep's ``q2_dq1`` … ``p2_du1``; rows are outputs).
        """
        key = ("jac", float(tolerance))
        cache = self.__dict__.setdefault("_steps", {})
        if key not in cache:
            step = self.step_function(tolerance)
            ins = [ca.MX.sym(n, *s.shape) for n, s in zip(step.name_in(), [step.sparsity_in(i) for i in range(step.n_in())])]
            q2, p2, _ = step(*ins)
            outs = [ca.jacobian(y, x) for y in (q2, p2) for x in (ins[0], ins[1], ins[2])]
            cache[key] = ca.Function("midpoint_vi_step_jacobian", ins, outs, step.name_in(),
                                     ["q2_dq1", "q2_dp1", "q2_du1", "p2_dq1", "p2_dp1", "p2_du1"])
        args = self._step_args(q1, p1, u1, t1, t2, parameters, weight, lam_guess)
        out = cache[key](*args)
        return {n: np.array(o) for n, o in zip(cache[key].name_out(), out)}

    def _step_args(self, q1, p1, u1, t1, t2, parameters, weight, lam_guess):
        nq, nu = self.num_coordinates, int(self.u.numel())
        q1 = _array(q1, nq, "q1")
        p1 = _array(p1, nq, "p1")
        u1 = np.zeros(nu) if u1 is None else _array(u1, nu, "u1")
        if t2 is None:
            raise OptionError("`step` needs the new time `t2`.")
        t1, t2 = float(t1), float(t2)
        if not t2 > t1:
            raise OptionError(f"A step needs t2 > t1; got t1 = {t1}, t2 = {t2}.")
        c = (t2 - t1) if weight is None else float(weight)
        lam = np.zeros(self.num_multipliers) if lam_guess is None else _array(lam_guess, self.num_multipliers, "lam_guess")
        return [q1, p1, u1, t1, t2, c, self.parameter_vector(parameters), lam]

    def parameter_vector(self, parameters):
        """Parameter values in model order from ``{symbol or name: value}``; every parameter is needed."""
        given = {}
        for k, val in (parameters or {}).items():
            name = k if isinstance(k, str) else k.name()
            if name not in self.parameter_names:
                raise OptionError(f"`{name}` in `parameters` is not a parameter of the model.{did_you_mean(name, self.parameter_names)}")
            given[name] = float(val)
        missing = [n for n in self.parameter_names if n not in given]
        if missing:
            raise OptionError(f"Give a value for parameter `{missing[0]}` in `parameters`.")
        return np.array([given[n] for n in self.parameter_names])

    # -- whole trajectories --------------------------------------------------------------------
    def node_states(self, times, Q, U, LAM, par, forces=None):
        """Momenta, speeds and accelerations at the nodes of a discrete trajectory.

        ``Q`` (nq, N+1), ``U`` (nu, N), ``LAM`` (m, N+1); returns ``P, V, A`` of
        shape (nq, N+1).  ``p_k = P⁻_k − (h_k/2) Gᵀλ_k`` (k < N),
        ``p_N = P⁺_{N−1} + (h_{N−1}/2) Gᵀλ_N``.  ``forces`` (nq, N+1), optional:
        further generalised forces at the nodes, weighted as ``Gᵀλ`` (contact forces).
        """
        times = np.asarray(times, float)
        n = times.size - 1
        H = np.diff(times)
        Pm, Pp = (np.array(x) for x in self.interval.map(n)(Q[:, :-1], Q[:, 1:], times[None, :-1], H[None, :], U, par)[:2])
        GT = np.array(self.node.map(n + 1)(Q, LAM, times[None, :], par)[1])
        if forces is not None:
            GT = GT + np.asarray(forces, float)
        P = np.empty_like(Q)
        P[:, :-1] = Pm - 0.5 * H * GT[:, :-1]
        P[:, -1] = Pp[:, -1] + 0.5 * H[-1] * GT[:, -1]
        V = np.array(self.velocity.map(n + 1)(Q, P, times[None, :], par))
        Un = np.hstack([U, U[:, -1:]]) if U.shape[0] else np.zeros((0, n + 1))
        A = np.array(self.acceleration.map(n + 1)(Q, V, Un, LAM, times[None, :], par))
        if forces is not None:  # M⁻¹F: the speed map is affine in the momentum
            zero = np.zeros_like(Q)
            A = A + np.array(self.velocity.map(n + 1)(Q, forces, times[None, :], par)) - np.array(self.velocity.map(n + 1)(Q, zero, times[None, :], par))
        return P, V, A

    def trajectory(self, times, Q, U, LAM, par, metadata=None, forces=None) -> Trajectory:
        """A :class:`Trajectory` on the nodes: states (q, v), controls (``u_k`` at node k, the last repeated), multipliers, derivatives (v, a).

        ``forces``: as in :meth:`node_states`.
        """
        _, V, A = self.node_states(times, Q, U, LAM, par, forces)
        n = np.asarray(times).size - 1
        Un = np.hstack([U, U[:, -1:]]) if U.shape[0] else np.zeros((0, n + 1))
        model = self.model
        qi = {name: i for i, name in enumerate(self.coordinate_names)}
        vi = {name: i for i, name in enumerate(self.speed_names)}
        cols, kinds = {}, {}
        for s in model.states:
            cols[s.name] = Q[qi[s.name]] if s.name in qi else V[vi[s.name]]
            kinds[s.name] = "state"
        for i, name in enumerate(self.control_names):
            cols[name], kinds[name] = Un[i], "control"
        for i, name in enumerate(self.multiplier_names):
            cols[name], kinds[name] = LAM[i], "multiplier"
        for s in model.states:
            cols[s.name + ".dot"] = V[qi[s.name]] if s.name in qi else A[vi[s.name]]
            kinds[s.name + ".dot"] = "derivative"
        params = {name: float(par[i]) for i, name in enumerate(self.parameter_names)}
        meta = dict(scheme=SCHEME, forcing=self.forcing, intervals=int(n), control_hold="zero-order")
        meta.update(metadata or {})
        return Trajectory(times, cols, kinds, params, meta)


def _lagrangian_bodies(model):
    bodies = []
    for c in model.components:
        states = [v.name for v in c.variables if v.kind == "state"]
        if isinstance(c, Multibody):
            if c.kinetic_energy is None:
                raise ModelError(f"Multibody `{c.name}` has no `kinetic_energy`; the midpoint variational integrator needs a Lagrangian L = T − V (the mass-matrix route is not variational).")
            extra = [n for n in states if n not in {c.variable(s).name for s in c.coordinates + c.speeds}]
            if extra:
                raise ModelError(f"State `{extra[0]}` of multibody `{c.name}` is not a coordinate or speed; the midpoint variational integrator handles coordinates and speeds only.")
            bodies.append(c)
        elif states:
            raise ModelError(f"Component `{c.name}` has the state `{states[0]}`; the midpoint variational integrator handles multibody coordinates and speeds only (controls and parameters may come from any component).")
    if not bodies:
        raise ModelError("The midpoint variational integrator needs at least one Multibody with a `kinetic_energy`.")
    return bodies


def _vec(x):
    return np.asarray(x, dtype=float).ravel()


# ---------------------------------------------------------------------------------------------
# simulation

def simulate(model, t, q0, p0=None, v0=None, controls=None, parameters=None, forcing="midpoint",
             tolerance=1e-12, max_iterations=50) -> Trajectory:
    """Simulate a Lagrangian model with the midpoint variational integrator.

    Each step solves the DEL equation for ``(q_{k+1}, λ_k)`` by Newton's
    method to ``tolerance`` (like trep's ``MidpointVI.step``).

    Parameters
    ----------
    model : Multibody, list of components, Model or Problem
    t : array_like, shape (N + 1,)
        Strictly increasing times of the nodes (steps may vary).
    q0 : array_like, shape (nq,), or dict {coordinate: value}
        Initial coordinates; must satisfy the holonomic constraints.
    p0, v0 : array_like, shape (nq,), or dict
        Initial momentum ``∂L/∂v`` or initial speeds (give exactly one); speeds
        should satisfy ``φ̇ = 0``.
    controls : None, array_like (N, nu), callable or dict, optional
        Piecewise-constant controls, one row per step: an array, a function
        ``u(t)`` evaluated at the middle of each step, or ``{control: array,
        callable or number}``.  ``None`` means zero.
    parameters : dict, optional
        ``{parameter: value}`` for every model parameter.
    forcing : {"midpoint", "trep"}
    tolerance : float
        Newton tolerance on the DEL residual (momentum units).

    Returns
    -------
    Trajectory
        On the nodes ``t``: coordinates, speeds ``v_k`` from the node momenta,
        controls, multipliers ``λ_k``, and derivative columns.  The node
        momenta are ``p_k = ∂L/∂v(q_k, v_k)`` exactly.

    Raises
    ------
    ConvergenceError
        If a step does not converge.
    """
    if isinstance(model, MidpointVI) and model.forcing != forcing:
        raise OptionError(f"`forcing={forcing!r}` differs from the forcing `{model.forcing}` of the MidpointVI given; build it with the forcing wanted.")
    vi = model if isinstance(model, MidpointVI) else MidpointVI(model, forcing)
    times = np.asarray(t, dtype=float).ravel()
    if times.size < 2 or not np.isfinite(times).all() or (np.diff(times) <= 0).any():
        raise OptionError("`t` must hold at least two finite, strictly increasing times.")
    n, nq, m = times.size - 1, vi.num_coordinates, vi.num_multipliers
    par = vi.parameter_vector(parameters)
    q = _named(q0, vi.coordinate_names, "q0")
    phi0 = np.asarray(vi.node(q, np.zeros(m), times[0], par)[0]).ravel()
    if phi0.size and np.abs(phi0).max() > 1e-8:
        i = int(np.argmax(np.abs(phi0)))
        raise OptionError(f"`q0` violates constraint `{vi.constraint_names[i]}` by {phi0[i]:.3e}.")
    if (p0 is None) == (v0 is None):
        raise OptionError("Give exactly one of `p0` (momentum) and `v0` (speeds).")
    p = _named(p0, vi.coordinate_names, "p0") if p0 is not None else _vec(vi.momentum(q, _named(v0, vi.speed_names, "v0"), times[0], par))
    U = _controls(controls, vi.control_names, times)
    Q, LAM = np.empty((nq, n + 1)), np.zeros((m, n + 1))
    Q[:, 0] = q
    lam = np.zeros(m)
    H = np.diff(times)
    for k in range(n):
        weight = 0.5 * H[k] + (0.5 * H[k - 1] if k else 0.0)
        q, p, lam = _step(vi, Q[:, k], p, U[:, k], times[k], times[k + 1], weight, par, lam, tolerance, max_iterations)
        Q[:, k + 1], LAM[:, k] = q, lam
    if m:
        LAM[:, n] = _vec(vi.end_multiplier(Q[:, n], p, 0.5 * H[-1], times[-1], par))
    return vi.trajectory(times, Q, U, LAM, par, dict(simulation=True, tolerance=tolerance, problem="simulation"))


def _step(vi, q1, p1, u1, t1, t2, weight, par, lam, tolerance, max_iterations):
    args = [q1, p1, u1, t1, t2, weight, par, lam]
    try:
        q2, p2, lam1 = vi.step_function(tolerance, max_iterations)(*args)
        r = np.asarray(vi.step_residual()(ca.vertcat(q2, lam1), *args[:-1])).ravel()
    except RuntimeError:  # the rootfinder gave up (maximum iterations)
        r = np.array([np.nan])
    # the rootfinder may also report success on NaN: check the residual itself
    if not np.all(np.isfinite(r)) or np.abs(r).max(initial=0.0) > 10 * tolerance * max(1.0, np.abs(p1).max(initial=0.0)):
        raise ConvergenceError(f"Newton's method did not solve the DEL equation of the step t = {t1:g} → {t2:g} "
                               f"(residual {np.abs(r).max() if np.isfinite(r).all() else np.nan:.2e}, tolerance {tolerance:.1e}); take smaller steps or raise `max_iterations`.")
    return _vec(q2), _vec(p2), _vec(lam1)


def _controls(controls, names, times):
    nu, n = len(names), times.size - 1
    mid = 0.5 * (times[:-1] + times[1:])
    if controls is None:
        return np.zeros((nu, n))
    if isinstance(controls, dict):
        rows = {}
        for k, val in controls.items():
            name = k if isinstance(k, str) else k.name()
            if name not in names:
                raise OptionError(f"`{name}` in `controls` is not a control of the model.{did_you_mean(name, names)}")
            rows[name] = _control_row(val, mid, name)
        return np.array([rows.get(name, np.zeros(n)) for name in names]).reshape(nu, n)
    if callable(controls):
        vals = np.array([np.asarray(controls(tm), dtype=float).ravel() for tm in mid])
        return _array(vals, n * nu, "controls(t)").reshape(n, nu).T
    a = np.asarray(controls, dtype=float)
    if a.size != n * nu:
        raise OptionError(f"`controls` must have shape (num_steps, num_controls) = ({n}, {nu}); got {a.shape}.")
    return _array(a, n * nu, "controls").reshape(n, nu).T


def _control_row(val, mid, name):
    if callable(val):
        return np.array([float(val(tm)) for tm in mid])
    a = np.broadcast_to(np.asarray(val, dtype=float), mid.shape) if np.ndim(val) == 0 else np.asarray(val, dtype=float).ravel()
    return _array(a, mid.size, f"controls[{name!r}]")


__all__ = ["MidpointVI", "ConvergenceError", "simulate", "FORCING", "SCHEME"]
