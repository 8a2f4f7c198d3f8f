"""Tables from OpenSim and CSV files, degrees to radians, Moco's low-pass filter, and tables as splines."""
import math
from pathlib import Path

import casadi as ca
import numpy as np
import pytest

from colloc.errors import FileFormatError, ProblemError
from colloc.goals import TimeTable, degrees_to_radians, filter_lowpass, read_table
from colloc.goals.splines import spline_function
from colloc.goals.tables import butterworth3, lowpass_iir, pad
from goal_oracle import moco

DATA = Path(__file__).resolve().parents[1] / "problems" / "data" / "gait2d"
KNEE = "/jointset/knee_r/knee_angle_r/value"


def test_reads_moco_example_tables():
    coords = read_table(DATA / "referenceCoordinates.sto")
    grf = read_table(DATA / "referenceGRF.sto")
    assert coords.time.size == 50 and len(coords.labels) == 10 and not coords.in_degrees
    assert coords.time[1] == pytest.approx(0.00959366) and coords[KNEE][0] == pytest.approx(-0.184426289)
    assert grf["ground_force_l_vy"][0] == pytest.approx(518.9919061)


def _write_mot(path, degrees):
    path.write_text("walk\nversion=1\nnRows=3\nnColumns=4\ninDegrees=%s\nendheader\n"
                    "time\t/jointset/knee/knee_angle/value\t/jointset/knee/knee_angle/speed\tpelvis_tx\n"
                    "0\t90\t180\t1.5\n0.1\t45\t-90\t1.6\n0.2\t0\t0\t1.7\n" % ("yes" if degrees else "no"))
    return path


def test_degrees_to_radians_scales_only_rotational_coordinates(tmp_path):
    """As SimbodyEngine::scaleRotationalDofColumns: /value and /speed columns of a rotational coordinate."""
    table = read_table(_write_mot(tmp_path / "m.mot", True), rotational=["knee_angle"])
    assert not table.in_degrees
    np.testing.assert_allclose(table["/jointset/knee/knee_angle/value"], [math.pi / 2, math.pi / 4, 0.0], rtol=1e-15)
    np.testing.assert_allclose(table["/jointset/knee/knee_angle/speed"], [math.pi, -math.pi / 2, 0.0], rtol=1e-15)
    np.testing.assert_array_equal(table["pelvis_tx"], [1.5, 1.6, 1.7])  # a translation stays in metres


def test_degrees_need_the_rotational_names(tmp_path):
    with pytest.raises(ProblemError, match="inDegrees=yes.*rotational="):
        read_table(_write_mot(tmp_path / "m.mot", True))
    radians = read_table(_write_mot(tmp_path / "r.mot", False))
    with pytest.raises(ProblemError, match="already in radians"):
        degrees_to_radians(radians, ["knee_angle"])


def test_csv_table_and_bad_files(tmp_path):
    (tmp_path / "a.csv").write_text("# measured\ntime,x\n0,1\n0.5,2\n1,4\n")
    assert read_table(tmp_path / "a.csv")["x"].tolist() == [1, 2, 4]
    (tmp_path / "b.csv").write_text("time,x\n0,1\n0,2\n1,4\n")
    with pytest.raises(FileFormatError, match="do not increase at data row 2"):
        read_table(tmp_path / "b.csv")
    (tmp_path / "c.sto").write_text("time\tx\n0\t1\n")
    with pytest.raises(FileFormatError, match="no `endheader`"):
        read_table(tmp_path / "c.sto")
    with pytest.raises(FileFormatError, match="unknown suffix"):
        read_table(tmp_path / "d.txt")
    with pytest.raises(ProblemError, match="no column `x_typo`"):
        read_table(tmp_path / "a.csv")["x_typo"]


def test_butterworth_matches_opensims_closed_form_coefficients():
    """Signal::LowpassIIR writes the coefficients out: a = ω³/d (1, 3, 3, 1), d = (ω+1)(ω²+ω+1), ω = tan(πf_c T)."""
    step, cutoff = 0.01, 6.0
    w = math.tan(2 * math.pi * cutoff * step / 2)
    d = (w + 1) * (w * w + w + 1)
    b, a = butterworth3(step, cutoff)
    np.testing.assert_allclose(b, np.array([1, 3, 3, 1]) * w**3 / d, rtol=1e-13)
    np.testing.assert_allclose(a, [1, (3 * w**3 + 2 * w**2 - 2 * w - 3) / d, (3 * w**3 - 2 * w**2 - 2 * w + 3) / d,
                                   (w - 1) * (w * w - w + 1) / d], rtol=1e-12)


def test_filter_frequency_response():
    """Forward–backward third-order Butterworth: gain |H|² = 1/(1 + (tan(πfT)/tan(πf_cT))⁶), so 1/2 at the cutoff.

    Measured on long sinusoids (the start-up transient trimmed off by the padding and by reading the middle)."""
    step, cutoff = 0.001, 10.0
    t = np.arange(0.0, 4.0, step)
    for f in (2.0, 10.0, 30.0):
        out = lowpass_iir(pad(np.sin(2 * np.pi * f * t), t.size // 2), step, cutoff)[t.size // 2:t.size // 2 + t.size]
        middle = slice(t.size // 4, 3 * t.size // 4)
        gain = np.max(np.abs(out[middle])) / 1.0
        expected = 1.0 / (1.0 + (math.tan(math.pi * f * step) / math.tan(math.pi * cutoff * step)) ** 6)
        assert gain == pytest.approx(expected, rel=2e-3), f


def test_padding_is_an_odd_reflection():
    np.testing.assert_array_equal(pad([1.0, 2.0, 4.0, 8.0], 2), [-2.0, 0.0, 1.0, 2.0, 4.0, 8.0, 12.0, 14.0])


def test_lowpass_matches_opensim_on_the_walking_reference(tmp_path):
    """TabOpLowPassFilter(6 Hz) on Moco's own example data (its times are not uniform to OpenSim's tolerance,
    so this also checks the quintic resampling; measured agreement 3e-14 of each column's peak), and on a
    uniform table."""
    for name in ("referenceCoordinates.sto", "referenceGRF.sto"):
        table = read_table(DATA / name)
        mine = filter_lowpass(table, 6.0)
        theirs = moco({"kind": "lowpass", "cutoff": 6.0, "time": table.time.tolist(),
                       "columns": {k: v.tolist() for k, v in table.columns.items()}}, tmp_path)
        np.testing.assert_allclose(mine.time, theirs["time"], rtol=0, atol=1e-15)
        for k in table.labels:
            scale = np.max(np.abs(theirs["columns"][k])) or 1.0
            np.testing.assert_allclose(mine[k], theirs["columns"][k], rtol=0, atol=1e-12 * scale, err_msg=f"{name} {k}")
    t = np.linspace(0.0, 1.0, 101)
    uniform = {"x": (np.sin(7 * t) + 0.1 * np.cos(40 * t)).tolist()}
    theirs = moco({"kind": "lowpass", "cutoff": 5.0, "time": t.tolist(), "columns": uniform}, tmp_path)
    mine = filter_lowpass(TimeTable(t, {"x": np.array(uniform["x"])}), 5.0)
    np.testing.assert_allclose(mine["x"], theirs["columns"]["x"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", ["bspline", "natural", "quintic"])
def test_table_as_a_smooth_function_of_time(method):
    """Both splines interpolate the rows, reproduce a line exactly and are C² at the knots (the jump of
    the second derivative across a knot shrinks with the distance from it)."""
    t = np.linspace(0.0, 1.0, 21)
    f = spline_function(t, 2.0 - 3.0 * t, method)
    s = ca.SX.sym("s")
    g = ca.Function("g", [s], [f(s), ca.jacobian(f(s), s), ca.hessian(f(s), s)[0]])
    np.testing.assert_allclose(np.array(g.map(21)(t.reshape(1, -1))[0]).ravel(), 2.0 - 3.0 * t, atol=1e-13)
    assert float(g(0.333)[1]) == pytest.approx(-3.0, abs=1e-12)
    y = np.sin(3 * t) + 0.05 * np.cos(17 * t)
    f = spline_function(t, y, method)
    g = ca.Function("g", [s], [f(s), ca.hessian(f(s), s)[0]])
    np.testing.assert_allclose(np.array(g.map(21)(t.reshape(1, -1))[0]).ravel(), y, atol=1e-13)
    knot = t[7]
    jumps = [abs(float(g(knot + e)[1]) - float(g(knot - e)[1])) for e in (1e-4, 1e-6)]
    assert jumps[1] < 2e-2 * jumps[0] + 1e-9


def test_unknown_spline_method():
    with pytest.raises(ProblemError, match="Unknown spline method 'akima'"):
        spline_function(np.linspace(0, 1, 5), np.zeros(5), "akima")


def test_quintic_is_opensims_resampling_spline_and_natural_is_the_textbook_one():
    from scipy.interpolate import CubicSpline

    from colloc.goals.tables import resample_natural_quintic

    t = np.linspace(0.0, 1.0, 9)
    y = np.sin(5 * t)
    s = np.array([0.03, 0.37, 0.61, 0.99])
    quintic, natural = spline_function(t, y, "quintic"), spline_function(t, y, "natural")
    np.testing.assert_allclose(np.array(quintic.map(4)(s.reshape(1, -1))).ravel(), resample_natural_quintic(t, y, s), atol=1e-14)
    np.testing.assert_allclose(np.array(natural.map(4)(s.reshape(1, -1))).ravel(), CubicSpline(t, y, bc_type="natural")(s),
                               atol=1e-14)


def test_any_column_label_becomes_a_function():
    """Labels are not identifiers (OpenSim 3 names such as `soleus.activation`, spaces, a leading digit)."""
    t = np.linspace(0.0, 1.0, 5)
    table = TimeTable(t, {"soleus.activation": 2.0 * t, "1 hip flexion": 1.0 - t})
    assert float(table("soleus.activation", 0.25)) == pytest.approx(0.5, abs=1e-14)
    assert float(table("1 hip flexion", 0.25)) == pytest.approx(0.75, abs=1e-14)
