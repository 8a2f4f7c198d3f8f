"""Sliding on a polygonal Coulomb cone where maximal dissipation switches between two vertices, against closed forms.

A point of unit mass on the floor, friction ``μ``, a cone of ``k`` facets (vertices ``d_j`` at angles ``2πj/k``).

* Slid at speed ``s`` in a direction ``θ`` from a vertex's (``−v̂ = d_j`` rotated by ``θ``): braked by ``μg d_j``
  until the speed reaches the bisector of ``d_j`` and its neighbour, then along it at ``μg cos(π/k)``
  (Filippov's sliding motion on the polygon's side); it stops after ``t* = s cos(|θ| − π/k) / (μg cos(π/k))``
  (closed form and path: :func:`test_events_closed_forms.polygon_slide`).  For ``θ → 0`` the speed reaches the
  bisector only when almost stopped (at ``s sin θ / sin(π/k)``): a slow slide at the switching surface, where a
  vertex that flips at every step (chatter) stalls an event-driven integration.
* Pushed across its slide: speed ``u₀`` along x on the square cone (vertices ``±x̂, ±ŷ``) and a constant push
  ``F`` along y.  At the vertex ``−x̂``: ``ẍ = −μg``, ``ÿ = F`` until ``ẏ = ẋ`` at ``t₁ = u₀/(μg + F)``.  There the
  friction ``−μg((1 − λ)x̂ + λŷ)`` that keeps ``ẍ = ÿ`` has ``λ = (F + μg)/(2μg)``: for ``F ≤ μg`` it is on the
  side and the point slides along the bisector at ``ẍ = ÿ = −(μg − F)/2`` until it stops at
  ``t₂ = t₁ + 2u₁/(μg − F)`` (``u₁ = u₀ − μg t₁``) and sticks (the push is inside the cone); for ``F > μg`` the
  speed crosses the bisector and the friction turns to the vertex ``−ŷ``: ``ẍ = 0``, ``ÿ = F − μg``.
* Pushed from rest on the square cone by ``ct (cos φ, sin φ)``, φ near π/4: it sticks until the push reaches the
  polygon's side ``P_x + P_y = μg`` at ``t₀ = μg / (c (cos φ + sin φ))`` and slides from there along the side's
  bisector, the friction ``−μg((1 − λ)x̂ + λŷ)`` with ``λ = (μg + ct(sin φ − cos φ))/(2μg)`` keeping ``ẍ = ÿ``
  (while ``0 ≤ λ ≤ 1``): ``ẍ = ÿ = c (cos φ + sin φ)(t − t₀)/2``, so ``x = y = c (cos φ + sin φ)(t − t₀)³/12``.
"""
from __future__ import annotations

import math

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from test_events_closed_forms import G, polygon_slide, puck, stick_times


@pytest.mark.parametrize("k", [4, 6])
@pytest.mark.parametrize("offset", [0.0, 1e-7, 1e-5, 1e-3, 0.2])
def test_sliding_along_a_vertex_or_just_off_it_stops_at_the_closed_form_time(k, offset):
    # −v̂ is the vertex d_1 (angle 2π/k) turned by `offset`: the speed's direction is that of −d_1, turned alike.
    # Beyond 1e-7 rad the bisector is reached at a speed ≥ rest_speed (1e-7): below it the point sticks at once
    mu, speed = 0.5, 2.0
    direction = 2 * math.pi / k + math.pi + offset
    t_stop, end = polygon_slide(speed, direction, mu, k)
    v0 = speed * np.array([math.cos(direction), math.sin(direction)])
    traj = cl.simulate_events(puck(mu, "polyhedral", k), 1.0, [0, 0, 0], [*v0, 0], times=np.linspace(0, 1, 101), max_events=10)
    slow = speed * math.sin(offset) / math.sin(math.pi / k) <= 1e-7  # the speed when the bisector is reached
    assert stick_times(traj) == pytest.approx([t_stop], abs=1e-12 if not slow else 1e-7 / (mu * G))
    np.testing.assert_allclose([traj["puck.x"][-1], traj["puck.y"][-1]], end, atol=1e-12 if not slow else 1e-14 + 1e-7 * t_stop)
    # on the way, the path of the closed form: the vertex's straight brake, then the bisector's (at the output times)
    d = np.array([math.cos(2 * math.pi / k), math.sin(2 * math.pi / k)])
    # on the way, the closed form's path while the vertex d_1 brakes it (until the bisector, or the stop)
    d = np.array([math.cos(2 * math.pi / k), math.sin(2 * math.pi / k)])
    t1 = (speed * math.cos(offset) - speed * math.sin(offset) / math.tan(math.pi / k)) / (mu * G)
    braked = traj.time <= t1
    assert braked.sum() > 10
    t = traj.time[braked][:, None]
    path = np.column_stack([traj["puck.x"], traj["puck.y"]])[braked]
    np.testing.assert_allclose(path, v0 * t + 0.5 * mu * G * d * t**2, atol=1e-12)


def _pushed_puck(mu, force):
    """:func:`puck` on the square cone pushed along y by a constant ``force``."""
    body = puck(mu, "polyhedral", 4)
    body.generalized_force = ca.vertcat(0, force, 0)
    return body


@pytest.mark.parametrize("push", [0.5, 1.5])
def test_a_push_across_the_slide_turns_the_friction_through_the_bisector(push):
    # push = F / (μ g): below 1 the point slides along the bisector and sticks; above, it crosses onto the vertex −ŷ
    mu, u0 = 0.5, 1.0
    F = push * mu * G
    body = _pushed_puck(mu, F)
    traj = cl.simulate_events(body, 0.5, [0, 0, 0], [u0, 0, 0], times=np.linspace(0, 0.5, 51), max_events=10)
    t1 = u0 / (mu * G + F)
    u1 = u0 - mu * G * t1
    x1, y1 = u0 * t1 - 0.5 * mu * G * t1**2, 0.5 * F * t1**2

    def closed_form(t):
        if t <= t1:
            return np.array([u0 * t - 0.5 * mu * G * t**2, 0.5 * F * t**2, u0 - mu * G * t, F * t])
        s = t - t1
        if F <= mu * G:
            a = -(mu * G - F) / 2
            s = min(s, -u1 / a)  # stopped at t₂, then stuck
            return np.array([x1 + u1 * s + 0.5 * a * s**2, y1 + u1 * s + 0.5 * a * s**2, u1 + a * s, u1 + a * s])
        return np.array([x1 + u1 * s, y1 + u1 * s + 0.5 * (F - mu * G) * s**2, u1, u1 + (F - mu * G) * s])

    expected = np.array([closed_form(t) for t in traj.time])
    got = np.column_stack([traj["puck.x"], traj["puck.y"], traj["puck.x_speed"], traj["puck.y_speed"]])
    np.testing.assert_allclose(got, expected, atol=1e-12)
    if F <= mu * G:
        assert stick_times(traj) == pytest.approx([t1 + 2 * u1 / (mu * G - F)], abs=1e-12)
    else:
        assert stick_times(traj) == []


@pytest.mark.parametrize("tilt", [0.0, 0.1])
def test_a_push_that_reaches_a_side_of_the_cone_starts_a_slide_along_its_bisector(tilt):
    mu, c, phi = 0.5, 10.0, math.pi / 4 + tilt
    body = puck(mu, "polyhedral", 4)
    push = body.control("push")
    body.generalized_force = ca.vertcat(push * math.cos(phi), push * math.sin(phi), 0)
    rate = c * (math.cos(phi) + math.sin(phi))
    t0 = mu * G / rate
    t_final = 2 * t0
    assert abs(c * t_final * (math.sin(phi) - math.cos(phi))) < mu * G  # λ stays on the side
    traj = cl.simulate_events(body, t_final, [0, 0, 0], [0, 0, 0], controls={"puck.push": lambda t: c * t},
                              times=np.linspace(0, t_final, 41), max_events=10)
    assert [e["kind"] for e in traj.metadata["events"] if e["kind"] in ("stick", "slip")] == ["slip"]
    slip = [e["time"] for e in traj.metadata["events"] if e["kind"] == "slip"][0]
    assert slip == pytest.approx(t0, abs=1e-12)
    expected = rate * np.maximum(traj.time - t0, 0.0) ** 3 / 12
    np.testing.assert_allclose(traj["puck.x"], expected, atol=1e-12)
    np.testing.assert_allclose(traj["puck.y"], expected, atol=1e-12)


def test_a_slide_on_a_bisector_takes_the_vertex_whose_forces_obey_the_laws():
    # A point (x, y, z) on the floor, square cone, μ = 1, kinetic energy ½ vᵀ K⁻¹ v with the inverse mass matrix
    # K = [[3, −1.2, 1.2], [−1.2, 1, 0], [1.2, 0, 1]] (positive definite), slid at (1, −1): on the bisector of the
    # vertices −x̂ and ŷ, where round-off makes −x̂ the first choice.  With the force at −x̂ the normal force's own
    # effect on z̈ is K_zz − μK_zx = −0.2 < 0 while gravity pulls down: no force obeys the laws (Painlevé).  At ŷ it
    # is K_zz = 1: λ = g (K_zy = 0), and ẍ = K_xy μg = −1.2g, ÿ = K_yy μg = g, z̈ = 0: the slide turns towards y
    # (ẋ + ẏ falls), where ŷ dissipates most, until ẋ = 0 at t₁ = 1/(1.2g).  The side between the two (Filippov's
    # motion along the bisector) would need ẍ + ÿ = 0, which no force on the side gives with λ ≥ 0.
    K = np.array([[3.0, -1.2, 1.2], [-1.2, 1.0, 0.0], [1.2, 0.0, 1.0]])
    b = cl.Multibody("p", coordinates=["x", "y", "z"])
    b.kinetic_energy = 0.5 * ca.mtimes([b.v.T, ca.DM(np.linalg.inv(K)), b.v])
    b.potential_energy = G * b.q[2]
    b.point_contact("floor", b.q, friction=1.0, cone="polyhedral", facets=4)
    t1 = 1.0 / (1.2 * G)
    times = np.linspace(0.0, 0.5 * t1, 11)
    traj = cl.simulate_events(b, 0.5 * t1, [0, 0, 0], [1.0, -1.0, 0.0], times=times)
    assert [e["kind"] for e in traj.metadata["events"]] == ["closed"]
    t = traj.time
    np.testing.assert_allclose(traj["p.x_speed"], 1.0 - 1.2 * G * t, atol=1e-12)
    np.testing.assert_allclose(traj["p.y_speed"], -1.0 + G * t, atol=1e-12)
    np.testing.assert_allclose(traj["p.z"], 0.0, atol=1e-12)
    np.testing.assert_allclose(traj["p.floor.normal_force"][1:], G, rtol=1e-12)  # after the closing event at t = 0
