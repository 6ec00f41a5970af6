"""The config of self-play on a pgx game (:mod:`sog.selfplay.pool_selfplay`): a
:class:`PoolExperiment`, its config dict with every field's default (what ``configs/pgx_*.py``
start from and ``--config.*`` overrides), and the check that turns one into the other."""

from __future__ import annotations

import dataclasses

import ml_collections

from sog.games import pgx_games
from sog.games import registry
from sog.nets import config as net_config
from sog.search import types as search_types


@dataclasses.dataclass(frozen=True)
class PoolExperiment:
  """A pool self-play run (every field has a default in :func:`default_config_dict`).

  Attributes:
    game: a pgx game's name (``"pgx/connect_four"``).
    search: the actors' and the solver's SoG(s, c) (k = 1 unless ``expansion_k`` says otherwise).
    games: actor games played at once (one vmapped batch of searches a round).
    solver_batch: queries the solver answers at once.
    eps: the probability an actor plays uniformly at random instead of by its search's policy.
    query_capacity, replay_capacity: the buffers' sizes (the oldest rows are dropped).
    batch_size, min_replay, train_steps_per_round: the trainer's minibatch, the examples it waits
      for, and its steps a round.
    max_steps, max_seconds: the run's budget (whichever ends first; 0 seconds: no time limit).
    checkpoint_every_seconds: how often the checkpoint and buffers are written (and at the end).
  """

  game: str
  seed: int
  search: search_types.GTCFRConfig
  network: net_config.NetworkConfig
  optimizer: net_config.OptimizerConfig
  games: int
  solver_batch: int
  eps: float
  query_capacity: int
  replay_capacity: int
  batch_size: int
  min_replay: int
  train_steps_per_round: int
  max_steps: int
  max_seconds: float
  checkpoint_every_seconds: float

  def __post_init__(self):
    for name in (
      "games",
      "solver_batch",
      "query_capacity",
      "replay_capacity",
      "batch_size",
      "train_steps_per_round",
      "max_steps",
    ):
      if not (isinstance(getattr(self, name), int) and getattr(self, name) >= 1):
        raise ValueError(f"pool self-play: {name} must be an int >= 1, got {getattr(self, name)!r}")
    if not 0 <= self.eps <= 1:
      raise ValueError(f"pool self-play: eps must be in [0, 1], got {self.eps}")
    if self.min_replay < self.batch_size or self.replay_capacity < self.min_replay:
      raise ValueError(
        f"pool self-play: need batch_size <= min_replay <= replay_capacity, got "
        f"{self.batch_size}, {self.min_replay}, {self.replay_capacity}"
      )


def default_config_dict(game: str, simulations: int = 100) -> ml_collections.ConfigDict:
  """A config dict with every field of :class:`PoolExperiment`, for configs and ``--config.*``."""
  return ml_collections.ConfigDict(
    {
      "pool": True,
      "game": game,
      "seed": 0,
      "search": dataclasses.asdict(search_types.GTCFRConfig(simulations=simulations)),
      # a state's network input is the same at any reach (S = 1: a range is only its mass)
      "network": dataclasses.asdict(net_config.NetworkConfig(unreached_range="uniform")),
      "optimizer": dataclasses.asdict(net_config.OptimizerConfig()),
      "games": 32,
      "solver_batch": 32,
      "eps": 0.05,
      "query_capacity": 4096,
      "replay_capacity": 50_000,
      "batch_size": 256,
      "min_replay": 1024,
      "train_steps_per_round": 2,
      "max_steps": 100_000,
      "max_seconds": 0.0,
      "checkpoint_every_seconds": 300.0,
    }
  )


def from_config_dict(config: ml_collections.ConfigDict) -> PoolExperiment:
  """The experiment of a config dict (``ValueError`` for a bad field or an unknown game)."""
  fields = {f.name for f in dataclasses.fields(PoolExperiment)}
  unknown = sorted(set(config) - fields - {"pool"})
  if unknown:
    raise ValueError(f"pool self-play config: unknown fields {unknown}; valid: {sorted(fields)}")
  values = config.to_dict()
  values.pop("pool", None)
  if not pgx_games.is_pgx_name(values["game"]):
    raise ValueError(f"pool self-play runs on a pgx game (pgx/...), got {values['game']!r}")
  registry.load(values["game"])  # a ValueError naming the valid pgx games for an unknown one
  sections = {
    "search": search_types.GTCFRConfig,
    "network": net_config.NetworkConfig,
    "optimizer": net_config.OptimizerConfig,
  }
  for name, section in sections.items():
    fields = {f.name for f in dataclasses.fields(section)}
    if set(values[name]) - fields:
      raise ValueError(
        f"pool self-play config: unknown {name} fields "
        f"{sorted(set(values[name]) - fields)}; valid: {sorted(fields)}"
      )
    values[name] = section(**values[name])
  return PoolExperiment(**values)
