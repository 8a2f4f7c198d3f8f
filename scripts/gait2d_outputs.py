"""A 2-D walking solution as OpenSim and a reader see it: full stride ``.sto`` and plots.

    python scripts/gait2d_outputs.py SOLUTION.sto [--out DIR] [--name gait2d]

SOLUTION is colloc's solution of problems/gait2d_tracking.py or problems/gait2d_predictive.py
(``result.trajectory.write(...)``, colloc's names) or Moco's (``scripts/moco_gait.py``,
``scripts/moco_gait_predictive.py``; OpenSim's names, renamed with ``colloc.opensim.from_opensim``).
Writes into DIR:

* ``<name>_stride.sto``: the full stride, the half cycle followed by its mirror image (left and right
  swapped, pelvis tx advanced by the half cycle's travel), under OpenSim's names; OpenSim's
  ``opensim-cmd viz model 2D_gait.osim <name>_stride.sto`` (or the GUI's "Load Motion") plays it;
* ``<name>.png``: joint angles (degrees), muscle activations and ground reaction forces
  (per foot, horizontal and vertical) of the solution against the filtered reference coordinates and
  the measured forces, over the half cycle in per cent (a predicted half cycle need not last the
  reference's 0.47 s).
"""
import argparse
import importlib.util
import pathlib

import casadi as ca
import numpy as np

import colloc as cl
from colloc.opensim import from_opensim, write_sto

ROOT = pathlib.Path(__file__).resolve().parent.parent


def problem_module():
    spec = importlib.util.spec_from_file_location("gait2d_tracking", ROOT / "problems" / "gait2d_tracking.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ground_reaction(trajectory, osim, feet):
    """Per force identifier, the summed sphere forces (N, shape (num_points, 3)) along the trajectory."""
    sk = osim.skeleton
    names = [n for n, _ in sk.opensim_names.items() if n.startswith("model.") and n != "model.lumbarAct"]
    symbols = [sk.body.variable(n).symbol for n in names]
    out = {}
    for identifier, spheres in feet.items():
        f = ca.Function("grf", symbols, [sum(sk.contacts[c].record[0:3] for c in spheres)])
        out[identifier] = np.array(f.map(trajectory.time.size)(*[trajectory[n].reshape(1, -1) for n in names])).T
    return out


def plot(trajectory, osim, module, path):
    """Joint angles, activations and GRF against the reference (module docstring)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    coordinates, grf = module.references()
    to_colloc = {v: k for k, v in osim.skeleton.opensim_names.items()}
    fig, axes = plt.subplots(4, 6, figsize=(18, 11))
    t = 100 * (trajectory.time - trajectory.time[0]) / (trajectory.time[-1] - trajectory.time[0])
    percent = 100 / module.DURATION  # the reference's half cycle is [0, DURATION] s
    joints = [c for c in coordinates.labels if c.split("/")[-2] not in ("pelvis_tx", "pelvis_ty")]
    joints = sorted(joints, key=lambda c: ("pelvis" not in c and "lumbar" not in c, c))  # tilt, lumbar first
    panels = list(axes[0]) + list(axes[1][:2])
    for ax, label in zip(panels[:2] + panels[2:], joints[:2] + [j for j in joints[2:]]):
        ax.plot(percent * coordinates.time, np.degrees(coordinates[label]), "k--", label="reference (6 Hz)")
        ax.plot(t, np.degrees(trajectory[to_colloc[label]]), label="solution")
        ax.set_title(label.split("/")[-2] + " (deg)", fontsize=9)
    model_grf = ground_reaction(trajectory, osim, module.FEET)
    for ax, (identifier, axis) in zip(axes[1][2:], [(i, a) for i in module.FEET for a in (0, 1)]):
        column = f"{identifier}{'xyz'[axis]}"
        ax.plot(percent * grf.time, grf[column], "k--", label="measured")
        ax.plot(t, model_grf[identifier][:, axis], label="solution")
        ax.set_title(column + " (N)", fontsize=9)
    muscles = [n for n in trajectory.names if n.endswith("_r.activation")]
    for ax, name in zip(list(axes[2]) + list(axes[3]), muscles):
        ax.plot(t, trajectory[name], label="right")
        ax.plot(t, trajectory[name.replace("_r.", "_l.")], label="left")
        ax.set_title(name.split(".")[0][:-2] + " activation", fontsize=9)
        ax.set_ylim(0, 1)
    for ax in list(axes[3])[len(muscles) - 6:]:
        ax.set_visible(False)
    axes[2, 0].legend(fontsize=8)
    for ax in axes.flat:
        ax.set_xlabel("half cycle (%)", fontsize=8)
        ax.set_xlim(0, 100)
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return fig


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("solution")
    parser.add_argument("--out", default=".")
    parser.add_argument("--name", default="gait2d_tracking", help="stem of the output files' names")
    args = parser.parse_args(argv)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    module = problem_module()
    osim = module.model()
    trajectory = cl.Trajectory.read(args.solution)
    if any(n.startswith("/") for n in trajectory.names):
        trajectory = from_opensim(trajectory, osim)
    stride = module.mirrored(trajectory)
    write_sto(stride, osim, out / f"{args.name}_stride.sto")
    plot(trajectory, osim, module, out / f"{args.name}.png")
    print(out / f"{args.name}_stride.sto", out / f"{args.name}.png")


if __name__ == "__main__":
    main()
