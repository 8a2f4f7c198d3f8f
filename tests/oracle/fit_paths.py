"""Fit polynomial muscle paths to an OpenSim model with OpenSim's ``PolynomialPathFitter`` (OpenSim 4.5+).

    python fit_paths.py MODEL.osim COORDINATES.sto OUT.osim [--order 4] [--samples 10]
    python fit_paths.py MODEL.osim sample:N OUT.osim ...

``sample:N`` makes the coordinate table itself: N frames 0.01 s apart in which every coordinate follows
a sine of its own frequency over the middle half of its range (translations ±2 cm around the range's
middle), with the model's constraints then enforced by ``assemble``.

Writes ``OUT.osim``: the model with every muscle's ``GeometryPath`` replaced by the fitted
``FunctionBasedPath`` (``ModOpReplacePathsWithFunctionBasedPaths``), whose ``length_function`` is a
``MultivariatePolynomialFunction`` of the coordinates the path spans, with moment-arm and
lengthening-speed functions as the fitter writes them.  Runs OpenSim, so it runs in its own process.

``models/opensim/Rajagopal2015_right_leg_fitted_paths.osim`` was made with ``python tests/oracle/fit_paths.py
models/opensim/Rajagopal2015_right_leg_9musc.osim sample:200 models/opensim/Rajagopal2015_right_leg_fitted_paths.osim``;
``models/opensim/2D_gait_fitted_paths.osim`` with
``python tests/oracle/fit_paths.py models/opensim/2D_gait.osim referenceCoordinates.sto
models/opensim/2D_gait_fitted_paths.osim`` from Moco's ``example2DWalking/referenceCoordinates.sto``
(opensim-core, Apache 2.0) with OpenSim 4.6.
"""
from __future__ import annotations

import argparse
import os
import shutil
import tempfile

import numpy as np
import opensim as osim


def sampled_coordinates(model, frames):
    """A TimeSeriesTable of coordinate values (see the module notes)."""
    state = model.initSystem()
    coords = model.getCoordinateSet()
    table = osim.TimeSeriesTable()
    labels = osim.StdVectorString()
    for i in range(coords.getSize()):
        labels.append(f"{coords.get(i).getAbsolutePathString()}/value")
    table.setColumnLabels(labels)
    for k in range(frames):
        row = osim.RowVector(coords.getSize(), 0.0)
        for i in range(coords.getSize()):
            c = coords.get(i)
            lo, hi = max(c.getRangeMin(), -3.0), min(c.getRangeMax(), 3.0)
            mid, half = 0.5 * (lo + hi), 0.25 * (hi - lo)
            if c.getMotionType() == 2:  # translational
                half = 0.02
            if not c.getLocked(state):
                c.setValue(state, mid + half * np.sin(0.07 * (i + 1) * k + i), False)
        model.assemble(state)
        for i in range(coords.getSize()):
            row[i] = coords.get(i).getValue(state)
        table.appendRow(0.01 * k, row)
    table.addTableMetaDataString("inDegrees", "no")
    return table


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("coordinates")
    ap.add_argument("out")
    ap.add_argument("--order", type=int, default=4)
    ap.add_argument("--samples", type=int, default=10)
    args = ap.parse_args()
    osim.Logger.setLevelString("error")
    osim.Logger.removeFileSink()  # OpenSim moves into the model's folder to load it; no opensim.log there
    work = tempfile.mkdtemp()
    try:
        model = osim.Model(os.path.abspath(args.model))
        model.initSystem()
        fitter = osim.PolynomialPathFitter()
        fitter.setModel(osim.ModelProcessor(model))
        if args.coordinates.startswith("sample:"):
            table = sampled_coordinates(osim.Model(os.path.abspath(args.model)), int(args.coordinates[7:]))
            fitter.setCoordinateValues(osim.TableProcessor(table))
        else:
            fitter.setCoordinateValues(osim.TableProcessor(os.path.abspath(args.coordinates)))
        fitter.setOutputDirectory(work)
        fitter.setMaximumPolynomialOrder(args.order)
        fitter.setNumSamplesPerFrame(args.samples)
        fitter.setGlobalCoordinateSamplingBounds(osim.Vec2(-20, 20))
        fitter.setIncludeMomentArmFunctions(True)
        fitter.setIncludeLengtheningSpeedFunction(True)
        fitter.run()
        paths = os.path.join(work, f"{model.getName()}_FunctionBasedPathSet.xml")
        processor = osim.ModelProcessor(os.path.abspath(args.model))
        processor.append(osim.ModOpReplacePathsWithFunctionBasedPaths(paths))
        fitted = processor.process()
        fitted.initSystem()
        fitted.printToXML(os.path.abspath(args.out))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
