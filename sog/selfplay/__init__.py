"""Sound self-play (SoG, Algorithm 2): actors, the query solver, the trainer, their buffers, and the
training run that interleaves them on one host (or runs actors and solvers as Ray actors:
``sog.selfplay.distributed``, imported on use) with checkpoints, metrics and evaluation."""

from sog.selfplay.actor import Actors
from sog.selfplay.buffers import Examples
from sog.selfplay.buffers import Queries
from sog.selfplay.buffers import QueryBuffer
from sog.selfplay.buffers import ReplayBuffer
from sog.selfplay.config import EvaluationConfig
from sog.selfplay.config import Experiment
from sog.selfplay.config import RayConfig
from sog.selfplay.config import SelfPlayConfig
from sog.selfplay.config import default_config_dict
from sog.selfplay.config import from_config_dict
from sog.selfplay.learner import Learner
from sog.selfplay.loop import SelfPlay
from sog.selfplay.query_solver import QuerySolver
from sog.selfplay.run import train

__all__ = [
  "Actors",
  "EvaluationConfig",
  "Examples",
  "Experiment",
  "Learner",
  "Queries",
  "QueryBuffer",
  "QuerySolver",
  "RayConfig",
  "ReplayBuffer",
  "SelfPlay",
  "SelfPlayConfig",
  "default_config_dict",
  "from_config_dict",
  "train",
]
