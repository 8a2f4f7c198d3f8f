

# -- scale ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("distance, tf, words", [
    (1e30, 1.0, "The final value of `mass.x` is 1e+30; a double resolves it only to 2.2e+14, coarser than IPOPT's constraint tolerance"),
    (1.0, 1e-12, "`mass.x` must change by 1 within the horizon of 1e-12, a rate of at least 1e+12 per unit time"),
    (1e-12, 1e-12, "The final value of `mass.x` is 1e-12, below what IPOPT's tolerance (about 1e-8) resolves"),
    (1.0, 1e13, "The final time tf is 1e+13"),
])
def test_a_badly_scaled_problem_is_refused_naming_the_quantity_before_the_build(distance, tf, words):
    """Before, x(T) = 1e30 ended in 'try a better guess', and x(T) = 1e-12 in T = 1e-12 was 'solved' with J = 0 (x ≡ 0
    meets x(T) = 1e-12 to IPOPT's tolerance; J* = 12 d²/T³ = 1.2e13)."""
    prob, _ = integrator(distance, tf=tf)
    with pytest.raises(cl.ProblemError) as info:
        cl.build_nlp(prob, intervals=4)
    assert words in str(info.value) and "express `mass.x` in other units" in str(info.value) or "in other units" in str(info.value)


@pytest.mark.parametrize("distance, tf", [(1e-6, 1e-6), (1.0, 1e-5)])
def test_short_horizons_within_the_resolved_scale_keep_their_analytic_optimum(distance, tf):
    """J* = 12 d²/T³, exact for Hermite–Simpson (u linear): 1.2e7 and 1.2e16 (u(0) = 6e10, still resolved)."""
    prob, _ = integrator(distance, tf=tf)
    res = cl.solve(prob, intervals=10)
    assert res.success and res.objective == pytest.approx(12 * distance**2 / tf**3, rel=1e-7)
    assert not res.warnings


def test_values_grown_too_large_during_a_solve_are_named_in_the_result():
    """min ∫(u − 1e13)² has u ≡ 1e13 at its optimum: solved to what a double resolves, and the summary says so."""
    res = cl.solve(_free_control(lambda u: (u - 1e13) ** 2), intervals=4)
    text = res.summary()
    assert "`m.u` at grid point" in text and "is 1e+13, too large to be resolved" in text and "cannot be trusted" in text, text
