"""Cart-pole swing-up with the pole's mass in Cartesian coordinates, pinned to the cart by a rod (docs/problems.md C1).

The cart-pole of ``cartpole.py`` (Kelly 2017) written with redundant
coordinates: the cart position x_c and the position (p_x, p_y) of the pole's
point mass (y up), held at distance ℓ from the pivot by the holonomic rod
constraint φ = (p_x − x_c)² + p_y² − ℓ² = 0.  With θ from the downward
vertical, p = (x_c + ℓ sin θ, −ℓ cos θ).

Objective
    minimize J = ∫₀ᵀ F² dt
States
    ``cartpole.xc``, ``cartpole.px``, ``cartpole.py`` [m];
    ``cartpole.vc``, ``cartpole.vpx``, ``cartpole.vpy`` [m/s]
Controls
    ``cartpole.force`` F on the cart [N], |F| ≤ 20
Multipliers
    ``cartpole.rod.lambda``: the rod force on the bob is 2λ (p − pivot), so
    the rod tension is −2λℓ.
Constraints
    m₁ ẍ_c = F − 2λ(p_x − x_c), m₂ p̈ = (0, −m₂ g) + 2λ (p_x − x_c, p_y);
    |x_c| ≤ 2; at t = 0: x_c = p_x = 0 and all speeds 0 except ṗ_y, with
    p_y ≤ 0 (so p = (0, −ℓ), hanging); at t = T = 2: x_c = p_x = d = 1, all
    speeds 0 except ṗ_y, p_y ≥ 0 (upright).  p_y and ṗ_y at the ends follow
    from φ = 0 and φ̇ = 0, so no endpoint row repeats the constraint.

Its optimum is the optimum of ``cartpole.py``: 58.807667 [COMPUTED] in
docs/problems.md C1.  Both forms have a second, lower local optimum,
J = 57.944780 [COMPUTED here: HS N=200 57.9447806, radau-3 N=200
57.9447804], in which the pole first swings back to about −1 rad before
going over the top; from the default guess the Cartesian form reaches it on
some meshes (e.g. Hermite–Simpson with 100 intervals) and the 58.807667 one
on others (25–50 intervals).

Source: M. Kelly, SIAM Review 59(4), 2017, §6 (parameters of Table 3 as quoted
in docs/problems.md C1); the Cartesian form is the standard DAE rewriting.
"""
import casadi as ca
import numpy as np

import colloc as cl

REFERENCE = dict(
    value=58.807667,
    source="docs/problems.md C1 [COMPUTED] continuous optimum (N=50,d=4: 58.8076677; N=100,d=4: 58.8076675)",
    tolerance=1e-3,
)

SOLVE = dict(scheme="hermite-simpson", intervals=100)  # coarser meshes may land in the lower local optimum 57.9448 (see above)

TWIN = "cartpole"


def build(duration=2.0, distance=1.0, m_cart=1.0, m_pole=0.3, length=0.5,
          gravity=9.81, max_force=20.0, max_travel=2.0):
    """Cart-pole in Cartesian coordinates; same keyword arguments as ``cartpole.build``."""
    ell = length
    body = cl.Multibody("cartpole", coordinates=["xc", "px", "py"], speeds=["vc", "vpx", "vpy"],
                        coordinate_bounds={"xc": (-max_travel, max_travel), "px": (-max_travel - 2 * ell, max_travel + 2 * ell),
                                           "py": (-2 * ell, 2 * ell)},
                        speed_bounds={"vc": (-20, 20), "vpx": (-30, 30), "vpy": (-30, 30)})
    xc, px, py = body.coordinates
    vc, vpx, vpy = body.speeds
    force = body.control("force", bounds=(-max_force, max_force))
    body.kinetic_energy = 0.5 * m_cart * vc**2 + 0.5 * m_pole * (vpx**2 + vpy**2)
    body.potential_energy = m_pole * gravity * py
    body.generalized_force = ca.vertcat(force, 0, 0)
    body.holonomic("rod", (px - xc) ** 2 + py**2 - ell**2)
    body.point("pivot", ca.vertcat(xc, 0))
    body.point("bob", ca.vertcat(px, py))

    prob = cl.Problem([body], t0=0.0, tf=duration, name="cartpole_cartesian")
    prob.initial({xc: 0.0, px: 0.0, py: (-2 * ell, 0.0), vc: 0.0, vpx: 0.0})
    prob.final({xc: distance, px: distance, py: (0.0, 2 * ell), vc: 0.0, vpx: 0.0})
    prob.minimize(integral=force**2)
    # Kelly's guess of cartpole.py mapped to the bob: cart and angle linear, speeds from them
    times = np.linspace(0.0, duration, 41)
    cart = distance * times / duration
    theta = np.pi * times / duration
    prob.guess({xc: (times, cart), px: (times, cart + ell * np.sin(theta)), py: (times, -ell * np.cos(theta)),
                force: 0.0})
    return prob


def guess_from_twin(problem, twin, length=0.5):
    """Set ``problem``'s guess to a ``cartpole.py`` trajectory ``twin`` mapped to (x_c, p, speeds, force).

    The two forms share two neighbouring local optima (58.8077 and 57.9448, see above); starting from the
    twin's solution keeps IPOPT at the twin's optimum, so the two can be compared on the same mesh.
    Solve with ``ipopt={"mu_init": 1e-6}`` so the first barrier steps do not leave that basin.
    """
    t, x, v = twin.time, twin["cartpole.x"], twin["cartpole.v"]
    th, om = twin["cartpole.theta"], twin["cartpole.omega"]
    ell = length
    problem.guess({"cartpole.xc": (t, x), "cartpole.px": (t, x + ell * np.sin(th)), "cartpole.py": (t, -ell * np.cos(th)),
                   "cartpole.vc": (t, v), "cartpole.vpx": (t, v + ell * np.cos(th) * om),
                   "cartpole.vpy": (t, ell * np.sin(th) * om), "cartpole.force": (t, twin["cartpole.force"])})
    return problem


def angle(xc, px, py):
    """Pole angle θ from the downward vertical, unwrapped over the array."""
    return np.unwrap(np.arctan2(np.asarray(px) - np.asarray(xc), -np.asarray(py)))
