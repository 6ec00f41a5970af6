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
from sog.selfplay.pool_config import PoolExperiment
from sog.selfplay.pool_config import default_config_dict as pool_default_config_dict
from sog.selfplay.pool_config import from_config_dict as pool_from_config_dict
from sog.selfplay.pool_selfplay import PoolSelfPlay
from sog.selfplay.pool_selfplay import train as train_pool
from sog.selfplay.query_solver import QuerySolver
from sog.selfplay.run import train

__all__ = [
  "Actors",
  "EvaluationConfig",
  "Examples",
  "Experiment",
  "Learner",
  "PoolExperiment",
  "PoolSelfPlay",
  "Queries",
  "QueryBuffer",
  "QuerySolver",
  "RayConfig",
  "ReplayBuffer",
  "SelfPlay",
  "SelfPlayConfig",
  "default_config_dict",
  "from_config_dict",
  "pool_default_config_dict",
  "pool_from_config_dict",
  "train",
  "train_pool",
]
