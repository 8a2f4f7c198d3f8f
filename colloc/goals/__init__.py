"""Moco's workflows as ordinary colloc costs and constraints: measured tables in, tracking and effort goals out.

Tables (:mod:`colloc.goals.tables`) read OpenSim ``.sto``/``.mot`` and CSV files and become smooth functions
of time (:mod:`colloc.goals.splines`).
"""
from .tables import TimeTable, degrees_to_radians, filter_lowpass, read_table

__all__ = ["TimeTable", "read_table", "degrees_to_radians", "filter_lowpass"]
