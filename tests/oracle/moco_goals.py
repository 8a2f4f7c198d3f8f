"""OpenSim's side of the goal and table checks, run as ``python tests/oracle/moco_goals.py REQUEST.json OUT.json``.

OpenSim's wheel carries its own libcasadi, so it never shares a process with colloc; the tests write a
request, run this script with the same interpreter and read the answer.  A request is
``{"kind": ..., ...}``; every kind returns a JSON object of plain numbers.
"""
import json
import sys

import numpy as np
import opensim as osim


def lowpass(req):
    """TabOpLowPassFilter on a table given as times and columns."""
    table = osim.TimeSeriesTable()
    labels = list(req["columns"])
    table.setColumnLabels(labels)
    data = np.column_stack([req["columns"][k] for k in labels])
    for t, row in zip(req["time"], data):
        table.appendRow(t, osim.RowVector(list(map(float, row))))
    proc = osim.TableProcessor(table)
    proc.append(osim.TabOpLowPassFilter(float(req["cutoff"])))
    out = proc.process()
    return {"time": list(out.getIndependentColumn()),
            "columns": {k: out.getDependentColumn(k).to_numpy().tolist() for k in labels}}


KINDS = {"lowpass": lowpass}


def main(argv):
    with open(argv[1]) as fh:
        req = json.load(fh)
    out = KINDS[req["kind"]](req)
    with open(argv[2], "w") as fh:
        json.dump(out, fh)


if __name__ == "__main__":
    main(sys.argv)
