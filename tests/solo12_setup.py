"""Solo12's URDF for the tests that need it, or a skip of the whole test module when it cannot be had."""
import pytest

import colloc as cl


def solo12():
    """``(pinocchio, path of solo12.urdf)``; skips the calling module when pinocchio, urdf_parser_py or
    example-robot-data is missing."""
    pin = pytest.importorskip("pinocchio")
    pytest.importorskip("urdf_parser_py")
    from colloc.model.urdf import example_robot

    try:
        return pin, example_robot("solo_description/robots/solo12.urdf")
    except cl.FileFormatError:
        pytest.skip("example-robot-data is not installed", allow_module_level=True)
