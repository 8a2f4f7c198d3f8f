"""Figures of a contact-implicit solution: contact forces, impulses and the contact schedule found.

matplotlib is imported when a figure is made (through :func:`colloc.plot._pyplot`).
"""
from __future__ import annotations

import numpy as np

from ..errors import OptionError
from .plot import _pyplot

#: Colour of each mode of the schedule.
MODE_COLOURS = {"open": "0.85", "closed": "C0", "stick": "C2", "slide": "C3"}


def plot_contacts(trajectory):
    """Normal and friction forces over time, impulses as stems, and the schedule as coloured spans.

    Parameters
    ----------
    trajectory : Trajectory
        A contact-implicit result (``metadata["contact"] == "implicit"``).

    Returns
    -------
    matplotlib.figure.Figure
        Axes titled ``contact forces`` (with the impulses) and ``contact schedule`` (one row per contact).
    """
    meta = trajectory.metadata
    if meta.get("contact") != "implicit":
        raise OptionError("plot_contacts draws contact-implicit results; this trajectory records no contact='implicit'.")
    plt = _pyplot()
    schedule = meta.get("contact_schedule", {})
    names = list(schedule) or sorted({n.rsplit(".", 1)[0] for n in trajectory.names if n.endswith(".normal_force")})
    fig, (ax, axs) = plt.subplots(2, 1, figsize=(7, 5), sharex=True, gridspec_kw=dict(height_ratios=[3, 1]))
    t = trajectory.time
    for k, c in enumerate(names):
        colour = f"C{k % 10}"
        ax.plot(t, trajectory[f"{c}.normal_force"], "-", color=colour, label=f"{c} normal")
        if f"{c}.friction_force" in trajectory:
            ax.plot(t, trajectory[f"{c}.friction_force"], "--", color=colour, label=f"{c} friction")
        P = trajectory[f"{c}.impulse"] if f"{c}.impulse" in trajectory else np.zeros_like(t)
        hit = np.flatnonzero(P > 0)
        if hit.size:
            ax.vlines(t[hit], 0, P[hit], color=colour, lw=2, label=f"{c} impulse")
        for a, b, mode in schedule.get(c, []):
            axs.barh(k, max(b - a, 1e-3 * max(trajectory.duration, 1e-12)), left=a, color=MODE_COLOURS.get(mode, "k"), label=mode)
    ax.set_title("contact forces")
    ax.legend(loc="best", fontsize="small")
    axs.set_title("contact schedule")
    axs.set_yticks(range(len(names)), names)
    handles = {h.get_label(): h for h in axs.patches}
    axs.legend(handles.values(), handles.keys(), loc="upper right", fontsize="small", ncol=4)
    axs.set_xlabel("time")
    fig.tight_layout()
    return fig
