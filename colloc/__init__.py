"""colloc: trajectory optimization by direct collocation on implicit-residual models."""
from .errors import CollocError, ContactParadoxError, FileFormatError, ModelError, OptionError, ProblemError
from .model.component import TIME, Component, KinematicConstraint, Model, Variable
from .model.multibody import Multibody
from .model.problem import Problem

__version__ = "0.1.0"

__all__ = [
    "CollocError", "ContactParadoxError", "FileFormatError", "ModelError", "OptionError", "ProblemError",
    "TIME", "Component", "KinematicConstraint", "Model", "Variable", "Problem",
    "Multibody",
]

from .discretization.mesh import make_mesh  # noqa: E402
from .discretization.schemes import SCHEMES, get_scheme  # noqa: E402
from .pipeline.solve import build_nlp, solve  # noqa: E402
from .results.trajectory import SolveResult, Status, Trajectory  # noqa: E402

__all__ += ["make_mesh", "SCHEMES", "get_scheme", "solve", "build_nlp", "SolveResult", "Status", "Trajectory"]

from .pipeline.refine import solve_adaptive  # noqa: E402
from .simulate.verify import simulate_controls, verify  # noqa: E402

__all__ += ["solve_adaptive", "simulate_controls", "verify"]

from .viz import plot  # noqa: E402  (matplotlib loads only when a figure is made)

__all__ += ["plot"]

from .model.impact import Impact  # noqa: E402
from .results.phased_trajectory import MultiPhaseResult, PhasedTrajectory  # noqa: E402
from .pipeline.multiphase_problem import MultiPhaseProblem, Phase, solve_phases  # noqa: E402

__all__ += ["Impact", "MultiPhaseProblem", "Phase", "solve_phases", "MultiPhaseResult", "PhasedTrajectory"]

from .pipeline.variational import MidpointVI, simulate  # noqa: E402

__all__ += ["MidpointVI", "simulate"]

from .model import urdf  # noqa: E402  (registers Multibody.from_urdf; the URDF parser loads only with a file)

__all__ += ["urdf"]

from .simulate.events import SimulationError, simulate_events  # noqa: E402  (scipy loads only when a simulation runs)

__all__ += ["simulate_events", "SimulationError"]

from .model.muscle import DeGrooteFregly2016Muscle  # noqa: E402

__all__ += ["DeGrooteFregly2016Muscle"]
