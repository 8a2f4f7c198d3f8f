"""colloc: trajectory optimization by direct collocation on implicit-residual models."""
from .errors import CollocError, FileFormatError, ModelError, OptionError, ProblemError
from .model import TIME, Component, KinematicConstraint, Model, Variable
from .problem import Problem

__version__ = "0.1.0"

__all__ = [
    "CollocError", "FileFormatError", "ModelError", "OptionError", "ProblemError",
    "TIME", "Component", "KinematicConstraint", "Model", "Variable", "Problem",
]
