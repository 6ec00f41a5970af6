"""CVPN checkpoints with orbax: parameters, optimiser state and step, plus a JSON of the
configuration (game, network, optimiser) that a restore checks before it reads any array."""

from __future__ import annotations

import dataclasses
import json
import logging
import pathlib
import sys
import traceback

import jax
import orbax.checkpoint as ocp

from sog.games import pgx_games
from sog.games import registry
from sog.nets import config as config_lib
from sog.nets import cvpn
from sog.nets import leaf
from sog.nets import train
from sog.search import leaf_models

_STATE = "state"
_META = "config.json"


@dataclasses.dataclass(frozen=True)
class CheckpointConfig:
  """What a checkpoint was trained for; a restore must ask for the same."""

  game: str
  network: config_lib.NetworkConfig
  optimizer: config_lib.OptimizerConfig

  def to_json(self) -> str:
    return json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True)

  @classmethod
  def from_json(cls, text: str) -> CheckpointConfig:
    data = json.loads(text)
    network = data["network"]
    if "unreached_range" not in network and pgx_games.is_pgx_name(data["game"]):
      # written before the option (issue 48, part 11): pgx self-play trained on states alone
      network = {**network, "unreached_range": "uniform"}
    return cls(
      game=data["game"],
      network=config_lib.NetworkConfig(**network),
      optimizer=config_lib.OptimizerConfig(**data["optimizer"]),
    )


def save(directory: str | pathlib.Path, state: train.TrainState, config: CheckpointConfig) -> None:
  """Writes ``state`` and ``config`` to ``directory`` (replacing what is there)."""
  directory = pathlib.Path(directory).absolute()
  directory.mkdir(parents=True, exist_ok=True)
  checkpointer = ocp.StandardCheckpointer()
  checkpointer.save(directory / _STATE, jax.device_get(state), force=True)
  checkpointer.wait_until_finished()
  (directory / _META).write_text(config.to_json())


def read_config(directory: str | pathlib.Path) -> CheckpointConfig:
  path = pathlib.Path(directory).absolute() / _META
  if not path.is_file():
    raise ValueError(f"{directory} is not a sog checkpoint: {_META} is missing")
  try:
    return CheckpointConfig.from_json(path.read_text())
  except (ValueError, KeyError, TypeError) as error:
    raise ValueError(f"{path} is corrupt: {error}") from None


def restore(
  directory: str | pathlib.Path,
  template: train.TrainState,
  expected: CheckpointConfig | None = None,
) -> tuple[train.TrainState, CheckpointConfig]:
  """Reads a checkpoint into the structure of ``template`` (a freshly initialised state).

  Raises ``ValueError`` if the checkpoint's configuration differs from ``expected`` or its arrays
  cannot be read into ``template`` (corrupt, or shaped for another game or network).
  """
  config = read_config(directory)
  if expected is not None and config != expected:
    raise ValueError(f"checkpoint {directory} was written for {config}, not {expected}")
  abstract = jax.tree_util.tree_map(ocp.utils.to_shape_dtype_struct, jax.device_get(template))
  try:
    state = ocp.StandardCheckpointer().restore(
      pathlib.Path(directory).absolute() / _STATE, abstract
    )
  except Exception as error:  # orbax raises many types for unreadable or mismatched arrays
    _silence_closed_loop_callbacks()
    raise ValueError(
      f"checkpoint {directory} cannot be restored: {type(error).__name__}: {str(error)[:300]}"
    ) from None
  shapes = lambda tree: jax.tree_util.tree_map(lambda x: (x.shape, x.dtype), tree)  # noqa: E731
  if shapes(state) != shapes(abstract):
    raise ValueError(
      f"checkpoint {directory} cannot be restored: its arrays do not have the "
      "template's shapes (another game or network)"
    )
  return state, config


def _silence_closed_loop_callbacks() -> None:
  """Drops the echoes of a failed restore. When one of orbax's concurrent reads fails, orbax closes
  its event loop while the other reads are still in flight; as each completes, its callback raises
  ``RuntimeError("Event loop is closed")`` as an unraisable exception, and Python prints one
  traceback for each (over a hundred lines for a truncated checkpoint). They say nothing the
  ``ValueError`` does not, so from the first failed restore on, this hook drops exactly those (an
  asyncio loop's closed check raising it) and hands every other unraisable exception to the hook it
  replaced. The other reads' own failures, when they finish after it (under load), asyncio logs
  as "Task exception was never retrieved": a filter on its logger drops those too."""
  previous = sys.unraisablehook
  if getattr(previous, "_sog_drops_closed_loop_callbacks", False):
    return
  logging.getLogger("asyncio").addFilter(_drop_unretrieved_exceptions)

  def hook(unraisable) -> None:
    error = unraisable.exc_value
    frames = traceback.extract_tb(unraisable.exc_traceback) if unraisable.exc_traceback else []
    if (
      isinstance(error, RuntimeError)
      and str(error) == "Event loop is closed"
      and frames
      and frames[-1].name == "_check_closed"
    ):
      return
    previous(unraisable)

  hook._sog_drops_closed_loop_callbacks = True
  sys.unraisablehook = hook


def _drop_unretrieved_exceptions(record: logging.LogRecord) -> bool:
  """False (drop) for asyncio's report of a task or future whose exception nobody retrieved."""
  return not record.getMessage().startswith(
    ("Task exception was never retrieved", "Future exception was never retrieved")
  )


def locate(directory: str | pathlib.Path, marker: str = _META) -> pathlib.Path:
  """``directory``, or its ``checkpoint/`` where ``directory`` is a training work directory: the one
  of the two holding the file ``marker`` (``directory`` itself when neither does)."""
  directory = pathlib.Path(directory)
  if not (directory / marker).is_file() and (directory / "checkpoint" / marker).is_file():
    return directory / "checkpoint"
  return directory


def restore_leaf_model(directory: str | pathlib.Path, game_name: str) -> leaf_models.LeafModel:
  """The CVPN of a checkpoint as a search leaf model; ``ValueError`` if it was trained for another
  game. ``directory`` is a checkpoint or a training work directory holding one in
  ``checkpoint/``."""
  directory = locate(directory)
  config = read_config(directory)
  if registry.canonical_name(config.game) != registry.canonical_name(game_name):
    raise ValueError(f"checkpoint {directory} was trained for {config.game}, not {game_name}")
  game = registry.load(config.game)
  network = cvpn.make_network(game.public_game, config.network)
  template = train.Trainer(network, config.optimizer).init(
    cvpn.init_params(network, game.public_game, jax.random.PRNGKey(0))
  )
  state, _ = restore(directory, template, config)
  return leaf.cvpn_leaf_model(network, state.params, game.name)
