"""Moco's workflows as ordinary colloc costs and constraints: measured tables in, tracking and effort goals out.

Tables (:mod:`colloc.goals.tables`) read OpenSim ``.sto``/``.mot`` and CSV files and become smooth functions
of time (:mod:`colloc.goals.splines`).  Every goal adds plain ``Problem.minimize``/``Problem.boundary`` terms
that a user could write by hand; each docstring names the Moco class it reproduces and its normalisation.
This package sits above the model layer: it imports colloc's core, files and model modules only.
"""
from .effort import (average_speed, control_effort, initial_activation, initial_velocity_equilibrium,
                     linearized_equilibrium_rate, mirror_pairs, periodicity)
from .inverse import PrescribedMotion, inverse_intervals, inverse_problem, prescribed_motion
from .metabolics import bhargava2004_rates, metabolic_cost, metabolic_rate
from .normalization import Normalization
from .tables import TimeTable, degrees_to_radians, filter_lowpass, read_table
from .tracking import track_contact, track_markers, track_states

__all__ = ["TimeTable", "read_table", "degrees_to_radians", "filter_lowpass", "Normalization", "track_states",
           "track_markers", "track_contact", "control_effort", "average_speed", "mirror_pairs", "periodicity",
           "initial_activation", "initial_velocity_equilibrium", "linearized_equilibrium_rate",
           "bhargava2004_rates", "metabolic_rate", "metabolic_cost", "PrescribedMotion", "prescribed_motion",
           "inverse_problem", "inverse_intervals"]
