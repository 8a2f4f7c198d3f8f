"""Every file reader either returns the data or raises colloc's FileFormatError naming the file.

Property-based (hypothesis): random bytes, every truncation of a valid file, random column
orders, duplicated and missing columns, NaN/inf values, a UTF-8 byte-order mark and Windows
line ends.  Example counts are kept small so the module runs in a few seconds.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import colloc as cl
from colloc.errors import FileFormatError
from colloc.batch.sweep import read_summary, write_summary

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def sample(n=5, scheme="trapezoidal"):
    t = np.linspace(0.0, 1.0, n)
    cols = {"m.x": t**2, "m.v": 2 * t, "m.u": np.cos(t), "m.x.dot": 2 * t}
    kinds = {"m.x": "state", "m.v": "state", "m.u": "control", "m.x.dot": "derivative"}
    return cl.Trajectory(t, cols, kinds, {"m.k": 0.5}, {"problem": "p", "scheme": scheme, "success": True})


def read_or_file_error(path):
    """The reader's contract: a Trajectory, or FileFormatError whose message names the file."""
    try:
        traj = cl.Trajectory.read(path)
    except FileFormatError as e:
        assert str(path) in str(e) or path.name in str(e), str(e)
        return None
    assert traj.time.ndim == 1 and traj.time.size >= 2
    for name in traj.names:
        assert traj[name].shape == traj.time.shape
    return traj


def same(a, b):
    assert a.names == b.names
    np.testing.assert_array_equal(a.time, b.time)
    for n in a.names:
        np.testing.assert_array_equal(a[n], b[n])
    assert a.parameters == b.parameters


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("valid")
    traj = sample(3)  # small: every truncation offset is read
    return traj, {s: (folder / f"t{s}").read_bytes() if traj.write(folder / f"t{s}") else None for s in (".csv", ".sto", ".npz")}


@FAST
@given(data=st.binary(max_size=600), suffix=st.sampled_from([".csv", ".sto", ".npz"]))
def test_random_bytes_give_data_or_a_file_error(tmp_path, data, suffix):
    path = tmp_path / f"random{suffix}"
    path.write_bytes(data)
    read_or_file_error(path)


@pytest.mark.parametrize("suffix", [".csv", ".sto", ".npz"])
def test_every_truncation_gives_data_or_a_file_error(tmp_path, files, suffix):
    _, raw = files
    data = raw[suffix]
    path = tmp_path / f"cut{suffix}"
    for end in range(len(data)):
        path.write_bytes(data[:end])
        read_or_file_error(path)


@FAST
@given(order=st.permutations(["time", "m.x", "m.v", "m.u", "m.x.dot"]))
def test_random_column_orders_read_the_same_columns(tmp_path, order):
    traj = sample()
    table = {"time": traj.time, **{n: traj[n] for n in traj.names}}
    lines = ["# scheme: \"trapezoidal\"", ",".join(order)]
    lines += [",".join(repr(float(table[n][r])) for n in order) for r in range(traj.time.size)]
    path = tmp_path / "order.csv"
    path.write_text("\n".join(lines) + "\n")
    back = cl.Trajectory.read(path)
    np.testing.assert_array_equal(back.time, traj.time)
    assert back.names == [n for n in order if n != "time"]
    for n in traj.names:
        np.testing.assert_array_equal(back[n], traj[n])


@FAST
@given(header=st.lists(st.sampled_from(["time", "m.x", "m.v", ""]), min_size=1, max_size=5),
       rows=st.integers(0, 3), suffix=st.sampled_from([".csv", ".sto"]))
def test_duplicated_missing_or_empty_columns_give_data_or_a_file_error(tmp_path, header, rows, suffix):
    sep = "," if suffix == ".csv" else "\t"
    lines = [] if suffix == ".csv" else ["name", "endheader"]
    lines.append(sep.join(header))
    lines += [sep.join(str(float(r + c)) for c in range(len(header))) for r in range(rows)]
    path = tmp_path / f"cols{suffix}"
    path.write_text("\n".join(lines) + "\n")
    traj = read_or_file_error(path)
    duplicated = len(set(header)) != len(header)
    if duplicated or "time" not in header or "" in header or rows < 2:
        assert traj is None


@pytest.mark.parametrize("suffix", [".csv", ".sto"])
def test_a_duplicated_column_is_refused_by_name(tmp_path, suffix):
    sep = "," if suffix == ".csv" else "\t"
    head = [] if suffix == ".csv" else ["name", "endheader"]
    path = tmp_path / f"dup{suffix}"
    path.write_text("\n".join(head + [sep.join(["time", "a.x", "a.x"]), sep.join("012"), sep.join("123")]) + "\n")
    with pytest.raises(FileFormatError, match=r"two columns named `a\.x`"):
        cl.Trajectory.read(path)


@FAST
@given(values=st.lists(st.sampled_from([math.nan, math.inf, -math.inf, 0.0, 1e308, -1e-308]), min_size=5, max_size=5),
       suffix=st.sampled_from([".csv", ".sto", ".npz"]))
def test_nan_and_inf_round_trip(tmp_path, values, suffix):
    traj = sample()
    traj._columns["m.v"] = np.array(values)
    path = tmp_path / f"nan{suffix}"
    traj.write(path)
    back = cl.Trajectory.read(path)
    np.testing.assert_array_equal(back["m.v"], np.array(values))


@FAST
@given(bom=st.booleans(), crlf=st.booleans(), suffix=st.sampled_from([".csv", ".sto"]))
def test_bom_and_crlf_read_like_the_plain_file(tmp_path, files, bom, crlf, suffix):
    traj, raw = files
    data = raw[suffix]
    if crlf:
        data = data.replace(b"\n", b"\r\n")
    if bom:
        data = b"\xef\xbb\xbf" + data
    path = tmp_path / f"odd{suffix}"
    path.write_bytes(data)
    same(cl.Trajectory.read(path), traj)


def test_a_single_row_is_refused_in_one_sentence(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("time,a.x\n0.0,1.0\n")
    with pytest.raises(FileFormatError, match=r"one\.csv` has 1 row of values; a trajectory needs at least two times"):
        cl.Trajectory.read(path)


@pytest.mark.parametrize("make, match", [
    (lambda p: p.mkdir(), "is a folder"),
    (lambda p: p.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00"), "binary"),
    (lambda p: p.write_bytes(b"\xff\xfe\xfa time"), "not UTF-8 text"),
])
def test_folders_and_binary_files_are_refused_by_name(tmp_path, make, match):
    path = tmp_path / "odd.csv"
    make(path)
    with pytest.raises(FileFormatError, match=match):
        cl.Trajectory.read(path)


@FAST
@given(data=st.binary(max_size=400))
def test_sweep_summaries_give_data_or_a_file_error(tmp_path, data):
    path = tmp_path / "s_sweep.csv"
    path.write_bytes(data)
    try:
        rows = read_summary(path)
    except FileFormatError as e:
        assert "s_sweep.csv" in str(e)
    else:
        assert isinstance(rows, list)


def test_every_truncation_of_a_summary_gives_data_or_a_file_error(tmp_path):
    path = tmp_path / "s_sweep.csv"
    write_summary([{"index": i, "k": 0.5 * i, "status": "solved", "success": True, "objective": 1.0 / (i + 1),
                    "file": f"s_{i}.csv", "message": "Optimal, \"quoted\""} for i in range(3)], path)
    data = path.read_bytes()
    assert [r["index"] for r in read_summary(path)] == [0, 1, 2]
    for end in range(len(data)):
        path.write_bytes(data[:end])
        try:
            read_summary(path)
        except FileFormatError as e:
            assert "s_sweep.csv" in str(e)


def npz_bytes(**arrays):
    import io

    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


GOOD_META = np.array('{"kinds": ["state"], "parameters": {}, "metadata": {}}')


@pytest.mark.parametrize("suffix, content, match", [
    (".csv", b"# only a comment\n", r"has no header row"),
    (".csv", b"a.x,a.v\n1,2\n3,4\n", r"has no `time` column \(header line 1: a\.x, a\.v\)"),
    (".csv", b"time,,a.v\n1,2,3\n", r"Line 1 of `.*` \(its header\) has an empty column name"),
    (".csv", b"time,a.x\n", r"has a header but no rows of values"),
    (".csv", b"time,a.x\n0,1\n1,2,3\n", r"Line 3 of `.*` has 3 values; its header has 2 columns"),
    (".csv", b"time,a.x\n0,1\n1,abc\n", r"Line 3 of `.*` holds `abc`, which is not a number"),
    (".csv", b"# kinds: [\"state\", \"control\"]\ntime,a.x\n0,1\n1,2\n", r"lists 2 kinds for 1 columns"),
    (".csv", b"# kinds: [1]\ntime,a.x\n0,1\n1,2\n", r"kinds in `.*` must be names"),
    (".csv", b"# kinds: {\"a\": 1}\ntime,a.x\n0,1\n1,2\n", r"`kinds` in `.*` must be a JSON list"),
    (".csv", b"# parameters: {\"k\": \"x\"}\ntime,a.x\n0,1\n1,2\n", r"parameters in `.*` must map names to numbers"),
    (".csv", b"# parameters: {oops\ntime,a.x\n0,1\n1,2\n", r"`parameters` in `.*` is not valid JSON"),
    (".csv", b"# params: [1, 2]\ntime,a.x\n0,1\n1,2\n", r"Metadata `params` in `.*` must be a JSON dict; got list"),
    (".csv", b"# violations: {\"defect\": \"big\"}\ntime,a.x\n0,1\n1,2\n", r"`violations` in `.*` must map constraint labels to numbers"),
    (".sto", b"name\ntime\ta.x\n0\t1\n", r"has no `endheader` line"),
    (".sto", b"endheader\n\n", r"has no column names after `endheader`"),
    (".sto", b"num_states=two\nendheader\ntime\ta.x\n0\t1\n1\t2\n", r"`num_states` in `.*` is not a whole number"),
    (".sto", b"colloc_kinds=[\"state\", \"state\"]\nendheader\ntime\ta.x\n0\t1\n1\t2\n", r"lists 2 kinds for 1 columns"),
    (".npz", npz_bytes(time=np.zeros(2), values=np.zeros((2, 1)), names=np.array(["a.x"])), r"has no `meta` array"),
    (".npz", npz_bytes(time=np.zeros(2), values=np.zeros((3, 1)), names=np.array(["a.x"]), meta=GOOD_META),
     r"`values` in `.*` has shape \(3, 1\); 2 times and 1 names need \(2, 1\)"),
    (".npz", npz_bytes(time=np.zeros(2), values=np.zeros((2, 1)), names=np.array([1.0]), meta=GOOD_META), r"`names` in `.*` must be a list"),
    (".npz", npz_bytes(time=np.array(["a", "b"]), values=np.zeros((2, 1)), names=np.array(["a.x"]), meta=GOOD_META),
     r"`time` and `values` in `.*` must be arrays of numbers"),
    (".npz", npz_bytes(time=np.zeros(2), values=np.zeros((2, 1)), names=np.array(["a.x"]), meta=np.array("[1]")),
     r"`meta` in `.*` must be a JSON object"),
    (".npz", b"PK\x03\x04 not a zip", r"is not a readable \.npz file \(truncated or corrupt"),
    (".txt", b"time,a.x\n0,1\n1,2\n", r"unknown suffix `\.txt`; use \.csv, \.sto or \.npz"),
])
def test_each_file_error_is_one_sentence_naming_the_file(tmp_path, suffix, content, match):
    path = tmp_path / f"f{suffix}"
    path.write_bytes(content)
    with pytest.raises(FileFormatError, match=match) as caught:
        cl.Trajectory.read(path)
    assert "f" + suffix in str(caught.value)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(FileFormatError, match=r"Trajectory file `.*nowhere\.csv` does not exist"):
        cl.Trajectory.read(tmp_path / "nowhere.csv")
