"""Fit polynomial muscle paths to an OpenSim model with OpenSim's ``PolynomialPathFitter`` (OpenSim 4.5+).

    python fit_paths.py MODEL.osim COORDINATES.sto OUT.osim [--order 4] [--samples 10]

Writes ``OUT.osim``: the model with every muscle's ``GeometryPath`` replaced by the fitted
``FunctionBasedPath`` (``ModOpReplacePathsWithFunctionBasedPaths``), whose ``length_function`` is a
``MultivariatePolynomialFunction`` of the coordinates the path spans, with moment-arm and
lengthening-speed functions as the fitter writes them.  Runs OpenSim, so it runs in its own process.

``models/opensim/2D_gait_fitted_paths.osim`` was made with
``python tests/oracle/fit_paths.py models/opensim/2D_gait.osim referenceCoordinates.sto
models/opensim/2D_gait_fitted_paths.osim`` from Moco's ``example2DWalking/referenceCoordinates.sto``
(opensim-core, Apache 2.0) with OpenSim 4.6.
"""
from __future__ import annotations

import argparse
import os
import shutil
import tempfile

import opensim as osim


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("coordinates")
    ap.add_argument("out")
    ap.add_argument("--order", type=int, default=4)
    ap.add_argument("--samples", type=int, default=10)
    args = ap.parse_args()
    osim.Logger.setLevelString("error")
    work = tempfile.mkdtemp()
    try:
        model = osim.Model(os.path.abspath(args.model))
        model.initSystem()
        fitter = osim.PolynomialPathFitter()
        fitter.setModel(osim.ModelProcessor(model))
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
