"""The counterfactual value-and-policy network (CVPN): model, losses, training, checkpoints."""

from sog.nets.checkpoint import CheckpointConfig
from sog.nets.checkpoint import restore_leaf_model
from sog.nets.config import NetworkConfig
from sog.nets.config import OptimizerConfig
from sog.nets.cvpn import CVPN
from sog.nets.cvpn import PBS
from sog.nets.cvpn import Prediction
from sog.nets.cvpn import init_params
from sog.nets.cvpn import make_network
from sog.nets.cvpn import pbs_at
from sog.nets.leaf import cvpn_leaf_model
from sog.nets.leaf import ensemble_leaf_model
from sog.nets.losses import Targets
from sog.nets.train import Batch
from sog.nets.train import Trainer
from sog.nets.train import TrainState

__all__ = [
  "CVPN",
  "PBS",
  "Batch",
  "CheckpointConfig",
  "NetworkConfig",
  "OptimizerConfig",
  "Prediction",
  "Targets",
  "TrainState",
  "Trainer",
  "cvpn_leaf_model",
  "ensemble_leaf_model",
  "init_params",
  "make_network",
  "pbs_at",
  "restore_leaf_model",
]
