"""Multibody components: generalised coordinates, speeds and kinematic constraints.

A :class:`Multibody` owns the coordinates ``q`` (nq states) and speeds ``v`` (nv
states) of a mechanical system.  Its rows are

* ``q̇ = N(q) v`` (explicit; ``N = I`` unless ``kinematics`` is given, e.g. a unit
  quaternion with nq = 4, nv = 3), and
* ``M(q) a + c(q, v, t) − τ − Gᵀ λ = 0`` (implicit, one row per speed), where
  ``a = v̇`` are the derivative symbols of the speeds (``Component.dot``).

The mass matrix ``M`` and bias ``c`` come by automatic differentiation from a
Lagrangian ``L = T − V`` or are given directly; ``τ`` is the generalised
applied force; ``Gᵀ λ`` the constraint force (docs/design.md §2).  Constraints are
declared once, at their own level; colloc derives the other levels with
``jtimes``:

=============  ==========================  ===================  ======================  ============
kind           user writes                 velocity level       acceleration level      rows of G
=============  ==========================  ===================  ======================  ============
holonomic      φ(q, t, p) = 0              φ̇ = Φ_q N v + φ_t    φ̈ = dφ̇/dt              Φ_q N
nonholonomic   ψ(q, v, t, p) = 0, lin. v   ψ                    ψ̇ = dψ/dt               ∂ψ/∂v
acceleration   α(q, v, a, t, p) = 0, lin. a                     α                       ∂α/∂a
=============  ==========================  ===================  ======================  ============

A holonomic constraint with ``Φ_q N ≡ 0`` and ``φ̇ ≡ 0`` (the kinematics keep it,
e.g. a unit quaternion's norm under ``q̇ = ½ Q(q) ω``) is a *position-level
invariant*: only φ is imposed, with no multiplier and no force.

Time derivatives are taken along ``q̇ = N(q) v``, ``v̇ = a``; parameters and any
symbol declared by another component are held constant in time.

Legend: ``q`` coordinates, ``v`` speeds, ``a`` accelerations, ``t`` time,
``p`` parameters, ``lam`` multipliers, ``N`` kinematic matrix, ``M`` mass
matrix, ``c`` bias force, ``tau`` generalised applied force, ``G`` constraint
Jacobian with respect to the speeds.
"""
from __future__ import annotations

from typing import NamedTuple

import casadi as ca
import numpy as np

from ..errors import ModelError, did_you_mean
from .constraint_levels import ConstraintLevels, _as_sx, _row
from .component import TIME, Component, KinematicConstraint, _check_name

#: Default bounds of every Lagrange multiplier (Moco's default is the same ±1000).
MULTIPLIER_BOUNDS = (-1000.0, 1000.0)

class EquationsOfMotion(NamedTuple):
    """Terms of ``M(q) a + c(q, v, t) − τ − Gᵀ λ = 0`` as CasADi ``SX``.

    ``mass_matrix`` (nv, nv), ``bias`` (nv, 1), ``generalized_force`` (nv, 1),
    ``constraint_jacobian`` (num_multipliers, nv), ``residual`` (nv, 1).
    """

    mass_matrix: ca.SX
    bias: ca.SX
    generalized_force: ca.SX
    constraint_jacobian: ca.SX
    residual: ca.SX


class Multibody(ConstraintLevels, Component):
    """A mechanical system in generalised coordinates with kinematic constraints.

    Parameters
    ----------
    name : str
        Component name; states are ``name.<coordinate>`` and ``name.<speed>``.
    coordinates : list of str
        Names of the generalised coordinates q (nq states).
    speeds : list of str, optional
        Names of the generalised speeds v (nv states).  Default
        ``<coordinate>_speed`` for each coordinate (needs nq = nv).
    kinematics : callable or matrix, optional
        ``N`` in ``q̇ = N(q) v``: a function of the coordinate vector ``q``
        (``SX``, shape (nq, 1)) returning an (nq, nv) matrix, or a constant
        matrix.  Default identity.
    coordinate_bounds, speed_bounds : dict, optional
        ``{local name: (lower, upper)}`` bounds at every grid point (also
        settable later with ``Problem.bound``).

    Notes
    -----
    Give the equations of motion in one of two ways before the component
    enters a :class:`~colloc.Model`:

    * Lagrangian (only with ``N = I``): set :attr:`kinetic_energy` ``T(q, v, t)``
      and optionally :attr:`potential_energy` ``V(q, t)``.  With ``L = T − V``,
      ``d/dt(∂L/∂v) − ∂L/∂q = τ + Gᵀλ`` gives
      ``M = ∂²L/∂v²`` and ``c = (∂²L/∂v∂q) v + ∂²L/∂v∂t − ∂L/∂q``.
    * Given terms: set :attr:`mass_matrix` ``M(q)`` and optionally
      :attr:`bias_force` ``c(q, v)`` (Coriolis, centrifugal and gyroscopic
      terms, e.g. ``ω × Jω``).  A :attr:`potential_energy` adds ``Nᵀ ∂V/∂q`` to
      ``c`` (virtual power of the conservative force).

    :attr:`generalized_force` ``τ`` (nv) may use controls, parameters, time
    and any other component's symbols.  The sign of ``λ`` follows docs/design.md
    §2 (``+Gᵀλ`` is the constraint force); Simbody's ``M u̇ + Gᵀλ = f``
    uses the opposite sign.
    """

    def __init__(self, name, coordinates=("x", "theta"), speeds=None, kinematics=None,
                 coordinate_bounds=None, speed_bounds=None):
        self._finalized = False
        super().__init__(name)
        coords = _name_list(coordinates, f"Coordinates of multibody `{name}`")
        if speeds is None:
            if kinematics is not None:
                raise ModelError(f"Multibody `{name}` declares `kinematics`; name its speeds too (`speeds=[...]`).")
            speeds = [f"{c}_speed" for c in coords]
        spd = _name_list(speeds, f"Speeds of multibody `{name}`")
        for what, given, names in (("coordinate", coordinate_bounds, coords), ("speed", speed_bounds, spd)):
            for key in (given or {}):
                if key not in names:
                    raise ModelError(f"Unknown {what} `{key}` in `{what}_bounds` of multibody `{name}`.{did_you_mean(key, names)}")
        self._q = [self.state(c, (coordinate_bounds or {}).get(c)) for c in coords]
        self._v = [self.state(s, (speed_bounds or {}).get(s)) for s in spd]
        self._N = self._kinematic_matrix(kinematics)
        self._terms = dict(kinetic_energy=None, potential_energy=None, mass_matrix=None,
                           bias_force=None, generalized_force=None)
        self._jacobians: list[ca.SX] = []  # G rows of each constraint with multipliers, in declaration order
        self._jacobian_names: list[str] = []
        self.points: dict[str, ca.SX] = {}
        self._applied: dict[str, ca.SX] = {}  # generalised forces other components apply, by source
        self._equations: EquationsOfMotion | None = None

    #: Set by :mod:`colloc.model.urdf` when it loads (it builds on this module, never the reverse).
    _urdf_builder = None

    @classmethod
    def from_urdf(cls, path, name="robot", base="fixed", joints=None, gravity=(0.0, 0.0, -9.81), actuated=None,
                  efforts=None, check_inertia=True):
        """A multibody whose coordinates are a URDF's joints; see :func:`colloc.model.urdf.from_urdf`."""
        return Multibody._urdf_builder(path, name=name, base=base, joints=joints, gravity=gravity, actuated=actuated,
                                       efforts=efforts, check_inertia=check_inertia)

    # -- symbols -------------------------------------------------------------------------------
    @property
    def coordinates(self) -> list:
        """Scalar symbols of the coordinates, in declaration order."""
        return list(self._q)

    @property
    def speeds(self) -> list:
        """Scalar symbols of the speeds, in declaration order."""
        return list(self._v)

    def _column(self, key, make):
        """A column (or fact about N) built once: the symbols and N never change after ``__init__`` (and each
        CasADi call costs tens of microseconds; declarations ask for these dozens of times)."""
        cache = self.__dict__.setdefault("_columns", {})
        if key not in cache:
            cache[key] = make()
        return cache[key]

    @property
    def q(self) -> ca.SX:
        """Coordinates as a column, shape (nq, 1)."""
        return self._column("q", lambda: ca.vertcat(*self._q))

    @property
    def v(self) -> ca.SX:
        """Speeds as a column, shape (nv, 1)."""
        return self._column("v", lambda: ca.vertcat(*self._v))

    @property
    def a(self) -> ca.SX:
        """Accelerations ``a = v̇`` (the speeds' derivative symbols), shape (nv, 1)."""
        return self._column("a", lambda: ca.vertcat(*[self.dot(s) for s in self._v]))

    @property
    def kinematic_matrix(self) -> ca.SX:
        """``N(q)``, shape (nq, nv)."""
        return self._N

    @property
    def qdot(self) -> ca.SX:
        """``q̇ = N(q) v``, shape (nq, 1)."""
        return self._column("qdot", lambda: ca.mtimes(self._N, self.v))

    @property
    def num_coordinates(self) -> int:
        return len(self._q)

    @property
    def num_speeds(self) -> int:
        return len(self._v)

    def _kinematic_matrix(self, kinematics):
        nq, nv = len(self._q), len(self._v)
        if kinematics is None:
            if nq != nv:
                raise ModelError(f"Multibody `{self.name}` has {nq} coordinates and {nv} speeds; without `kinematics` N(q) they must be as many.")
            self.__dict__.setdefault("_columns", {})["identity"] = True  # known without converting N to numbers
            return ca.SX.eye(nq)
        N = kinematics(self.q) if callable(kinematics) else kinematics
        try:
            N = ca.SX(N)
        except (NotImplementedError, TypeError, RuntimeError):
            raise ModelError(f"`kinematics` of multibody `{self.name}` must give an SX matrix N(q); got {type(N).__name__}.") from None
        if N.shape != (nq, nv):
            raise ModelError(f"`kinematics` N(q) of multibody `{self.name}` has shape {N.shape}; expected (nq, nv) = ({nq}, {nv}).")
        own_q = {s.name() for s in self._q}
        for s in ca.symvar(N):
            if s.name() not in own_q:
                raise ModelError(f"`kinematics` N(q) of multibody `{self.name}` uses `{s.name()}`; it may depend on the coordinates only. Pass a function `lambda q: ...` of the coordinate vector.")
        return N

    def _is_identity_kinematics(self):
        N = self._N
        return self._column("identity", lambda: N.is_constant() and N.shape[0] == N.shape[1]
                            and np.array_equal(np.array(ca.DM(N)), np.eye(N.shape[0])))

    # -- dynamics terms ------------------------------------------------------------------------
    def _set_term(self, key, value, shape):
        self._check_open(f"set `{key}`")
        if value is None:
            self._terms[key] = None
            return
        expr = _as_sx(value, f"`{key}` of multibody `{self.name}`")
        if shape[1] == 1 and expr.shape == (shape[1], shape[0]) and shape[0] > 1:
            expr = expr.T
        if expr.shape != shape:
            raise ModelError(f"`{key}` of multibody `{self.name}` has shape {expr.shape}; expected {shape}.")
        bad = [s.name() for s in ca.symvar(expr) if s.name().endswith(".dot")]
        if bad:
            raise ModelError(f"`{key}` of multibody `{self.name}` uses the derivative `{bad[0]}`; the equations of motion must be linear in the accelerations through the mass matrix only.")
        self._terms[key] = expr

    kinetic_energy = property(lambda self: self._terms["kinetic_energy"], doc="Kinetic energy T(q, v, t), scalar (Lagrangian route; needs N = I).")
    potential_energy = property(lambda self: self._terms["potential_energy"], doc="Potential energy V(q, t), scalar.")
    mass_matrix = property(lambda self: self._terms["mass_matrix"], doc="Mass matrix M(q), shape (nv, nv) (given-terms route).")
    bias_force = property(lambda self: self._terms["bias_force"], doc="Bias force c(q, v, t), shape (nv, 1) (given-terms route; default 0).")
    @property
    def generalized_force(self):
        """Generalised applied force τ, shape (nv, 1): the body's own plus what other components apply (default None)."""
        own, applied = self._terms["generalized_force"], list(self._applied.values())
        if not applied:
            return own
        return sum(applied[1:], applied[0]) + (own if own is not None else 0)

    @kinetic_energy.setter
    def kinetic_energy(self, value):
        if value is not None and not self._is_identity_kinematics():
            raise ModelError(f"Multibody `{self.name}` has kinematics q̇ = N(q) v with N ≠ I; the Lagrangian route is only supported for N = I. Set `mass_matrix` and `bias_force` instead.")
        if value is not None and self._terms["mass_matrix"] is not None:
            raise ModelError(f"Multibody `{self.name}` already has a `mass_matrix`; give either `kinetic_energy` or `mass_matrix`, not both.")
        self._set_term("kinetic_energy", value, (1, 1))

    @potential_energy.setter
    def potential_energy(self, value):
        self._set_term("potential_energy", value, (1, 1))

    @mass_matrix.setter
    def mass_matrix(self, value):
        if value is not None and self._terms["kinetic_energy"] is not None:
            raise ModelError(f"Multibody `{self.name}` already has a `kinetic_energy`; give either `kinetic_energy` or `mass_matrix`, not both.")
        self._set_term("mass_matrix", value, (self.num_speeds, self.num_speeds))

    @bias_force.setter
    def bias_force(self, value):
        self._set_term("bias_force", value, (self.num_speeds, 1))

    @generalized_force.setter
    def generalized_force(self, value):
        self._set_term("generalized_force", value, (self.num_speeds, 1))

    def apply_generalized_force(self, source, force) -> None:
        """Add a generalised force that another component (an actuator such as a muscle) applies.

        The body sums it with its own :attr:`generalized_force`:
        ``τ = τ_own + Σ_source τ_source``.

        Parameters
        ----------
        source : str
            Name of the applying component (each source applies once).
        force : casadi.SX, shape (nv, 1)
            For a path actuator with length ``l(q)`` and tension ``F``, ``−Nᵀ (∂l/∂q)ᵀ F``.
        """
        self._check_open(f"apply a force from `{source}`")
        if source in self._applied:
            raise ModelError(f"`{source}` already applies a generalised force to multibody `{self.name}`.")
        expr = _as_sx(force, f"the generalised force `{source}` applies to multibody `{self.name}`")
        if expr.shape != (self.num_speeds, 1):
            raise ModelError(f"The generalised force `{source}` applies to multibody `{self.name}` has shape {expr.shape}; expected ({self.num_speeds}, 1).")
        self._applied[source] = expr

    def equations(self) -> EquationsOfMotion:
        """The terms of ``M a + c − τ − Gᵀλ = 0`` (built by AD; see the class notes)."""
        if self._equations is not None:
            return self._equations
        T, V, M, c = (self._terms[k] for k in ("kinetic_energy", "potential_energy", "mass_matrix", "bias_force"))
        q, v, nv = self.q, self.v, self.num_speeds
        if T is None and M is None:
            raise ModelError(f"Multibody `{self.name}` has no equations of motion: set `kinetic_energy` (and `potential_energy`) or `mass_matrix` (and `bias_force`).")
        if c is not None and M is None:
            raise ModelError(f"Multibody `{self.name}` has a `bias_force` but no `mass_matrix`; with `kinetic_energy` the bias comes from the Lagrangian.")
        if T is not None:
            L = T - V if V is not None else T
            p = ca.gradient(L, v)  # generalised momentum ∂L/∂v
            M = ca.jacobian(p, v)
            c = ca.jtimes(p, q, v) + ca.jacobian(p, TIME) - ca.gradient(L, q)
        else:
            c = c if c is not None else ca.SX.zeros(nv, 1)
            if V is not None:
                c = c + ca.mtimes(self._N.T, ca.gradient(V, q))
        tau = self.generalized_force
        tau = ca.SX(tau) if tau is not None else ca.SX.zeros(nv, 1)
        G = ca.vertcat(*self._jacobians) if self._jacobians else ca.SX(0, nv)
        lam = self.multiplier_vector
        residual = ca.mtimes(M, self.a) + c - tau - ca.mtimes(G.T, lam)
        eq = EquationsOfMotion(M, c, tau, G, residual)
        if self._finalized:
            self._equations = eq
        return eq

    # -- kinematic constraints -----------------------------------------------------------------
    @property
    def multiplier_vector(self) -> ca.SX:
        """Multipliers λ of this component's constraints, in declaration order."""
        lams = [m.symbol for k in self.constraints for m in k.multipliers]
        return ca.vertcat(*lams) if lams else ca.SX(0, 1)

    def holonomic(self, name, phi, multiplier_bounds=MULTIPLIER_BOUNDS) -> KinematicConstraint:
        """Declare a holonomic constraint ``φ(q, t, p) = 0`` (scalar or column).

        colloc derives ``φ̇ = Φ_q N v + ∂φ/∂t`` and ``φ̈ = dφ̇/dt`` (in q, v, a,
        t); the constraint force uses ``G = Φ_q N``.  Declares one multiplier
        per row, ``name.constraint.lambda`` (``…lambda_<i>`` for a column).

        A constraint the kinematics keep by themselves — ``Φ_q N ≡ 0`` and
        ``φ̇ ≡ 0``, such as the unit norm of a quaternion with
        ``q̇ = ½ Q(q) ω`` — is a *position-level invariant*: the continuous
        motion never leaves it, but a discretisation drifts off it.  It is kept
        at position level only (``velocity`` and ``acceleration`` are None) and
        has no multiplier and no force; the transcription imposes ``φ = 0``
        where it imposes positions (and the Bordalba projection gets one slack
        per row to make room for it).  Both conditions are checked numerically
        at a few points within the coordinates' bounds.

        Raises
        ------
        ModelError
            If φ uses speeds, accelerations, controls or multipliers, or a row
            does not depend on the coordinates, or its rows repeat an earlier
            constraint (see :meth:`_check_independent`), or a column mixes
            invariant rows with rows that need a force.
        """
        phi = self._constraint_expr(name, phi, "holonomic", allow_v=False, allow_a=False)
        for i in range(phi.numel()):
            if not ca.depends_on(phi[i], self.q):
                raise ModelError(f"Holonomic constraint `{self.name}.{name}`{_row(phi, i)} does not depend on the coordinates of `{self.name}`; it does not constrain the motion.")
        G = ca.jacobian(phi, self.q)
        if not self._is_identity_kinematics():
            G = ca.mtimes(G, self._N)
        phi_dot = self._rate(phi)
        if self._is_invariant(name, phi, G, phi_dot):
            return self._register_invariant(name, phi)
        return self._register(name, "holonomic", phi, phi_dot, self._rate(phi_dot), G, multiplier_bounds)

    def nonholonomic(self, name, psi, multiplier_bounds=MULTIPLIER_BOUNDS) -> KinematicConstraint:
        """Declare a velocity constraint ``ψ(q, v, t, p) = 0``, linear in v.

        colloc derives ``ψ̇ = dψ/dt`` (in q, v, a, t); ``G = ∂ψ/∂v``.

        Raises
        ------
        ModelError
            If ψ is not linear in v, a row does not depend on v (declare it with
            :meth:`holonomic`), it uses accelerations, controls or multipliers,
            or it repeats an earlier constraint.
        """
        psi = self._constraint_expr(name, psi, "nonholonomic", allow_v=True, allow_a=False)
        G = ca.jacobian(psi, self.v)
        self._check_linear(name, "nonholonomic", psi, G, self.v, "speeds", "holonomic")
        return self._register(name, "nonholonomic", None, psi, self._rate(psi), G, multiplier_bounds)

    def acceleration(self, name, alpha, multiplier_bounds=MULTIPLIER_BOUNDS) -> KinematicConstraint:
        """Declare an acceleration constraint ``α(q, v, a, t, p) = 0``, linear in a.

        ``a`` are the speeds' derivative symbols (:attr:`a`, ``dot(v)``);
        ``G = ∂α/∂a``.  Imposed at collocation points only.
        """
        alpha = self._constraint_expr(name, alpha, "acceleration", allow_v=True, allow_a=True)
        G = ca.jacobian(alpha, self.a)
        self._check_linear(name, "acceleration", alpha, G, self.a, "accelerations", "nonholonomic")
        return self._register(name, "acceleration", None, None, alpha, G, multiplier_bounds)

    # -- contacts ------------------------------------------------------------------------------
    def contact(self, name, gap, restitution=0.0, friction=0.0, tangent=None, cone="polyhedral", facets=4):
        """Declare a unilateral contact with gap ``φ(q) ≥ 0``; see :class:`colloc.model.contact.Contact`.

        ``restitution`` e ∈ [0, 1], ``friction`` μ ≥ 0 (needs ``tangent`` s(q), the
        tangential position whose rate is the sliding speed: one expression in the
        plane, two orthogonal ones in 3-D, whose cone is ``"polyhedral"`` with
        ``facets`` vertices or ``"circular"``).  Returns the Contact;
        ``body.contacts`` lists them.
        """
        from .contact import declare_contact

        return declare_contact(self, name, gap, restitution, friction, tangent, cone, facets)

    def point_contact(self, name, point, surface=None, restitution=0.0, friction=0.0, cone="polyhedral", facets=4):
        """Declare the contact of a point ``p(q)`` (3 rows) with a surface ``ψ(x) ≥ 0`` (default the ground
        ``z ≥ 0``): gap and two tangent directions from the surface's normal; see
        :func:`colloc.model.contact.declare_point_contact`."""
        from .contact import declare_point_contact

        return declare_point_contact(self, name, point, surface, restitution, friction, cone, facets)

    # -- points --------------------------------------------------------------------------------
    def contact_point(self, frame, offset=(0.0, 0.0, 0.0), plane=None, name=None, restitution=0.0, friction=0.0,
                      cone="polyhedral", facets=4):
        """Declare the contact of a point of a link frame (``offset`` in it) with a plane, default the ground ``z ≥ 0``.

        For bodies with frames (:meth:`Multibody.from_urdf`); ``plane=(point, normal)``; see
        :func:`colloc.model.contact.declare_frame_contact`.  Returns the Contact.
        """
        from .contact import declare_frame_contact

        return declare_frame_contact(self, frame, offset, plane, name, restitution, friction, cone, facets)

    def point(self, name, expr) -> ca.SX:
        """Declare a named point (2-D or 3-D position in q, t, p) for plots and animations."""
        _check_name(name, "Point")
        if name in self.points:
            raise ModelError(f"Multibody `{self.name}` declares point `{name}` twice.")
        expr = _as_sx(expr, f"point `{self.name}.{name}`")
        if expr.shape[1] != 1 and expr.shape[0] == 1:
            expr = expr.T
        if expr.shape not in ((2, 1), (3, 1)):
            raise ModelError(f"Point `{self.name}.{name}` must be a 2-D or 3-D position; got shape {expr.shape}.")
        if ca.depends_on(expr, self._column("va", lambda: ca.vertcat(self.v, self.a))):
            raise ModelError(f"Point `{self.name}.{name}` depends on speeds or accelerations; a point is a position in the coordinates.")
        self.points[name] = expr
        return expr

    # -- model assembly ------------------------------------------------------------------------
    def _check_open(self, action):
        if self._finalized:
            raise ModelError(f"Multibody `{self.name}` is already part of a Model; {action} before building the Model or Problem.")

    def _declare(self, local, kind, bounds):
        self._check_open(f"declare `{local}`")
        return super()._declare(local, kind, bounds)

    def finalize(self) -> None:
        """Write the rows ``q̇ = N v`` and ``M a + c − τ − Gᵀλ = 0`` (once; called by Model)."""
        if self._finalized:
            return
        mine = [self.variable(s).name for s in self._q + self._v]
        given = [n for n in mine if n in self._rows]
        if given:
            raise ModelError(f"Multibody `{self.name}` writes the rows of its coordinates and speeds itself; remove the residual/derivative given for `{given[0]}`.")
        eq = self.equations()  # raises before any row is written
        self.derivative(self._q, self.qdot)
        self.residual(self._v, eq.residual)
        self._finalized = True
        self._equations = eq

    # -- numeric helpers -----------------------------------------------------------------------
    @property
    def other_symbols(self) -> list:
        """Symbols of the equations other than t, q, v, a, λ (controls, parameters, other components), by name."""
        eq = self.equations()
        core = {s.name() for s in ca.symvar(ca.vertcat(TIME, self.q, self.v, self.a, self.multiplier_vector))}
        syms = [s for s in ca.symvar(ca.vertcat(eq.residual, ca.vec(eq.mass_matrix))) if s.name() not in core]
        return sorted(syms, key=lambda s: s.name())

    def _function(self, fname, out, out_name):
        w = self.other_symbols
        inputs = [TIME, self.q, self.v, self.a, self.multiplier_vector, ca.vertcat(*w) if w else ca.SX(0, 1)]
        return ca.Function(f"{self.name}_{fname}", inputs, [out], ["t", "q", "v", "a", "lam", "w"], [out_name])

    def mass_matrix_function(self) -> ca.Function:
        """``(t, q, v, a, lam, w) -> M``, ``w`` ordered as :attr:`other_symbols`; call by keyword, missing inputs are 0."""
        return self._function("mass_matrix", self.equations().mass_matrix, "M")

    def inverse_dynamics_function(self) -> ca.Function:
        """``(t, q, v, a, lam, w) -> residual`` with ``residual = M a + c − τ − Gᵀλ`` (nv, 1)."""
        return self._function("inverse_dynamics", self.equations().residual, "residual")

    def inverse_dynamics(self, q, v, a, lam=None, t=0.0, inputs=None):
        """Generalised force that must be added to τ to produce the accelerations ``a``.

        ``M(q) a + c(q, v, t) − τ − Gᵀλ``, Simbody's ``calcResidualForce``
        with docs/design.md's sign of λ.  Inputs may be numbers or CasADi symbols.

        Parameters
        ----------
        q, v, a : array_like or casadi.SX/MX, shapes (nq,), (nv,), (nv,)
        lam : array_like, shape (num_multipliers,), optional
            Multipliers in declaration order; default zero.
        t : float, optional
        inputs : dict, optional
            ``{symbol or full name: value}`` for every symbol in
            :attr:`other_symbols` (controls, parameters, other components).

        Returns
        -------
        numpy.ndarray, shape (nv,) for numeric inputs, else a CasADi column.
        """
        w = self.other_symbols
        given = {(k if isinstance(k, str) else _sym_name(k)): val for k, val in (inputs or {}).items()}
        known = [s.name() for s in w]
        for k in given:
            if k not in known:
                raise ModelError(f"`{k}` in `inputs` is not used by the equations of multibody `{self.name}`.{did_you_mean(k, known)}")
        missing = [k for k in known if k not in given]
        if missing:
            raise ModelError(f"`inverse_dynamics` of multibody `{self.name}` needs a value for `{missing[0]}` in `inputs`.")
        if lam is None:
            lam = np.zeros(self.multiplier_vector.numel())
        args = [t, q, v, a, lam, ca.vertcat(*[given[k] for k in known]) if known else np.zeros(0)]
        res = self.inverse_dynamics_function()(*args)
        return np.array(res).ravel() if isinstance(res, ca.DM) else res


def _name_list(names, what):
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise ModelError(f"{what} must be a list of names; got {names!r}.")
    names = list(names)
    if not names:
        raise ModelError(f"{what} must not be empty.")
    return names


def _sym_name(s):
    if isinstance(s, (ca.SX, ca.MX)) and s.is_symbolic() and s.numel() == 1:
        return s.name()
    raise ModelError(f"Keys of `inputs` must be variable symbols or names; got {s!r}.")


__all__ = ["Multibody", "EquationsOfMotion", "MULTIPLIER_BOUNDS"]
