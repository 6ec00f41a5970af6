"""Regularized Nash Dynamics (R-NaD; Perolat et al. 2021, DeepNash: Perolat et al. 2022),
model-free: self-play trajectories, a reward transformation, NeuRD updates and a fixed-point
iteration.

For a regularisation policy pi_reg, the transformed game pays player i, at a step where player j
plays a with the current policy pi, the extra reward -eta log(pi(a) / pi_reg(a)) if j = i and
+eta log(pi(a) / pi_reg(a)) otherwise. Its dynamics (here NeuRD, a policy-gradient form of the
replicator dynamics on the logits) converge to the transformed game's unique equilibrium, the
fixed point; R-NaD then sets pi_reg to it and starts again, and the sequence of fixed points
converges to a Nash equilibrium of the game.

Each learner step plays ``batch_size`` episodes with the current policy (both seats,
:class:`sog.baselines.trajectories.Simulator`), and for every decision of player i at infostate I
with action a_t estimates, with G the transformed return after the step:
  * the value target G_t (including the step's own regularisation term);
  * the action values q(a) = -eta l(a) + b + 1[a = a_t] (F_t - b) / pi(a_t), with l = log(pi /
    pi_reg), F_t the return after the step's own term and the baseline b = V(I) + eta sum_b pi(b)
    l(b) (the expected F under pi given V), an unbiased estimate of the transformed game's action
    values;
  * the NeuRD update of the logits along q(a) - sum_b pi(b) q(b), clipped to [-clip, clip], where
    the (centred) logit is inside [-beta, beta] or the step moves it back (DeepNash's threshold).
The function is a table (a logit row and a value per infostate) or a flax MLP of the public state's
encoding, the private state and the seat (DeepNash's network in miniature); the optimiser is Adam.
Every ``steps_per_fixed_point`` steps pi_reg becomes the current policy. The learner reads the
public tree only through the simulator; the exact evaluation plays the last iterate pi (R-NaD's
claim is about the last iterate, not an average).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import chex
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax

from sog.baselines import trajectories
from sog.games import registry


@dataclasses.dataclass(frozen=True)
class RNaDConfig:
  """R-NaD's settings (OpenSpiel's defaults for its neural version in brackets).

  Attributes:
    eta: the reward transformation's weight [0.2].
    batch_size: episodes per learner step [256].
    learning_rate: Adam's step size [5e-5, for a network of 3 x 512]. On Kuhn's table 5e-3 and
      1,000 steps a fixed point reach 0.010-0.023 after 5-10 fixed points, where 1e-2 and 2e-2
      hover at 0.015-0.04 and 0.03-0.07.
    steps_per_fixed_point: learner steps before pi_reg becomes the current policy.
    beta: NeuRD's logit threshold [2].
    clip: NeuRD's bound on the advantage [10,000].
    hidden: the network's hidden widths; () for the tabular version.
    seed: the network's initialisation and the episodes' draws.
  """

  eta: float = 0.2
  batch_size: int = 128
  learning_rate: float = 0.005
  steps_per_fixed_point: int = 500
  beta: float = 2.0
  clip: float = 10_000.0
  hidden: tuple[int, ...] = ()

  def __post_init__(self):
    for name in ("eta", "learning_rate", "beta", "clip"):
      if not getattr(self, name) > 0:
        raise ValueError(f"RNaDConfig.{name} must be > 0, got {getattr(self, name)}")
    for name in ("batch_size", "steps_per_fixed_point"):
      if getattr(self, name) < 1:
        raise ValueError(f"RNaDConfig.{name} must be >= 1, got {getattr(self, name)}")
    if any(width < 1 for width in self.hidden):
      raise ValueError(f"RNaDConfig.hidden widths must be >= 1, got {self.hidden}")


class _Network(nn.Module):
  """An MLP from an infostate's features to the action logits and the value."""

  hidden: tuple[int, ...]
  num_actions: int

  @nn.compact
  def __call__(self, x):
    for width in self.hidden:
      x = nn.relu(nn.Dense(width)(x))
    out = nn.Dense(self.num_actions + 1)(x)
    return out[..., :-1], out[..., -1]


@chex.dataclass(frozen=True)
class RNaDState:
  params: Any
  regularisation: Any  # pi_reg's parameters
  optimiser: Any
  step: chex.Array
  rng: chex.PRNGKey


class RNaD:
  """R-NaD on a game, tabular (``config.hidden == ()``) or with a network."""

  def __init__(self, game: registry.Game, config: RNaDConfig = RNaDConfig()):
    self.game = game
    self.config = config
    self.name = "rnad"
    tree = game.tree
    self.simulator = trajectories.Simulator(tree)
    self._legal = jnp.asarray(tree.legal)
    self._shape = tree.legal.shape  # [N, S, A]
    self._optimiser = optax.adam(config.learning_rate)
    if config.hidden:
      self._network = _Network(config.hidden, tree.num_actions)
      N, S, _ = self._shape
      seat = np.clip(tree.kind, 0, 1)
      features = np.concatenate(
        [  # [N, S, F]: public encoding, private state, seat
          np.broadcast_to(tree.encoding[:, None, :], (N, S, tree.encoding.shape[1])),
          np.broadcast_to(np.eye(S)[None], (N, S, S)),
          np.broadcast_to(np.eye(2)[seat][:, None, :], (N, S, 2)),
        ],
        axis=-1,
      )
      self._features = jnp.asarray(features, jnp.float32)
    self._run = jax.jit(self._loop)

  # The function: logits and values of infostates (node, s).
  def _init_params(self, rng: chex.PRNGKey) -> Any:
    if not self.config.hidden:
      return {"logits": jnp.zeros(self._shape), "value": jnp.zeros(self._shape[:2])}
    return self._network.init(rng, self._features[0, 0])

  def _apply(self, params: Any, node: chex.Array, infostate: chex.Array):
    if not self.config.hidden:
      return params["logits"][node, infostate], params["value"][node, infostate]
    return self._network.apply(params, self._features[node, infostate])

  def _table(self, params: Any) -> chex.Array:
    """The policy [N, S, A] at every infostate (legal-masked softmax of the logits)."""
    if self.config.hidden:
      logits, _ = self._network.apply(params, self._features)
    else:
      logits = params["logits"]
    return jax.nn.softmax(jnp.where(self._legal, logits, -jnp.inf), axis=-1)

  def _loss(self, params: Any, regularisation: Any, episodes: trajectories.Trajectory):
    config = self.config
    logits, values = self._apply(params, episodes.node, episodes.infostate)  # [B, T, A], [B, T]
    reg_logits, _ = self._apply(regularisation, episodes.node, episodes.infostate)
    legal = episodes.legal
    log_policy = jax.nn.log_softmax(jnp.where(legal, logits, -jnp.inf), axis=-1)
    log_reg = jax.nn.log_softmax(jnp.where(legal, reg_logits, -jnp.inf), axis=-1)
    policy = jnp.exp(log_policy)
    ratio = jax.lax.stop_gradient(jnp.where(legal, log_policy - log_reg, 0.0))  # l(a)
    taken = jax.nn.one_hot(episodes.action, legal.shape[-1])
    decision = episodes.decision.astype(values.dtype)
    own_term = config.eta * (ratio * taken).sum(-1) * decision  # eta l(a_t) at decisions
    # Transformed returns for each player i: G^i_t = u_i + sum_{k >= t} r^i_k.
    seat = jnp.arange(2)[:, None, None]  # [2, 1, 1]
    rewards = jnp.where(episodes.actor[None] == seat, -own_term[None], own_term[None])  # [2, B, T]
    future = jnp.flip(jnp.cumsum(jnp.flip(rewards, -1), -1), -1) + episodes.returns.T[:, :, None]
    returns = jnp.take_along_axis(future, episodes.actor[None], axis=0)[0]  # G_t of the actor
    after = returns + own_term  # F_t: the return after the step's own term
    pi = jax.lax.stop_gradient(policy)
    baseline = jax.lax.stop_gradient(values) + config.eta * (pi * ratio).sum(-1)
    q = (
      -config.eta * ratio
      + baseline[..., None]
      + taken * ((after - baseline) / jnp.maximum((pi * taken).sum(-1), 1e-12))[..., None]
    )
    advantage = jnp.clip(q - (pi * q).sum(-1, keepdims=True), -config.clip, config.clip)
    centred = logits - (
      jnp.where(legal, logits, 0.0).sum(-1, keepdims=True) / legal.sum(-1, keepdims=True)
    )
    moves = ((advantage > 0) & (centred < config.beta)) | (
      (advantage < 0) & (centred > -config.beta)
    )
    neurd = -(jnp.where(legal & moves, centred * jax.lax.stop_gradient(advantage), 0.0)).sum(-1)
    value_loss = 0.5 * (values - jax.lax.stop_gradient(returns)) ** 2
    return ((neurd + value_loss) * decision).sum() / jnp.maximum(decision.sum(), 1.0)

  def _step(self, state: RNaDState) -> RNaDState:
    rng, play_key = jax.random.split(state.rng)
    table = self._table(state.params)
    episodes = jax.vmap(self.simulator.play, in_axes=(None, 0))(
      table, jax.random.split(play_key, self.config.batch_size)
    )
    grads = jax.grad(self._loss)(state.params, state.regularisation, episodes)
    updates, optimiser = self._optimiser.update(grads, state.optimiser, state.params)
    params = optax.apply_updates(state.params, updates)
    step = state.step + 1
    fixed_point = step % self.config.steps_per_fixed_point == 0
    regularisation = jax.tree_util.tree_map(
      lambda new, old: jnp.where(fixed_point, new, old), params, state.regularisation
    )
    return RNaDState(
      params=params, regularisation=regularisation, optimiser=optimiser, step=step, rng=rng
    )

  def _loop(self, state: RNaDState, iterations: jax.Array) -> RNaDState:
    return jax.lax.fori_loop(0, iterations, lambda _, s: self._step(s), state)

  def init(self, seed: int = 0) -> RNaDState:
    init_key, rng = jax.random.split(jax.random.PRNGKey(seed))
    params = self._init_params(init_key)
    return RNaDState(
      params=params,
      regularisation=params,
      optimiser=self._optimiser.init(params),
      step=jnp.int32(0),
      rng=rng,
    )

  def run(self, state: RNaDState, iterations: int) -> RNaDState:
    """``iterations`` more learner steps (one compilation serves every count)."""
    if iterations < 1:
      raise ValueError(f"iterations must be >= 1, got {iterations}")
    return self._run(state, jnp.int32(iterations))

  def iterations(self, state: RNaDState) -> int:
    return int(state.step)

  def average_policy(self, state: RNaDState) -> np.ndarray:
    """The last iterate pi [N, S, A] (float64) at every infostate."""
    policy = np.asarray(self._table(state.params), np.float64)
    return policy / policy.sum(-1, keepdims=True)
