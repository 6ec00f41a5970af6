"""Playing episodes of a game in JAX: a simulator over the game's world states for model-free
learners.

A world state is (public state n, private states s0, s1). The simulator draws the private deal from
the game's prior, then at every step either draws a chance outcome (with its probability given both
private states: the public probability times the child's pair weight over the node's) or the acting
player's action from a policy table indexed by (n, s_actor), and moves to the public child and the
players' next infostates through the tree's edge tables. A learner sees only what a trajectory
records (who acted, at which infostate, with which legal actions and probability, and the returns);
the public tree serves here as the game engine, as OpenSpiel's game would.

Trajectories have a fixed length (the tree's depth), padded after the terminal; ``vmap`` plays many.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np

from sog.games import public_game
from sog.games import tree as tree_lib


@chex.dataclass(frozen=True)
class Trajectory:
  """One episode, [T] per step (T = the tree's depth; steps after the terminal are padding).

  Attributes:
    decision: the step is a player's decision (False at chance steps and padding).
    actor: the acting player (0 or 1) at decisions.
    node: the public state, and infostate: the actor's infostate, at each step.
    action: the action taken at decisions; legal [T, A] the actor's legal actions.
    probability: the probability the acting policy gave that action.
    returns: [2] the players' utilities at the terminal (zero-sum).
  """

  decision: chex.Array
  actor: chex.Array
  node: chex.Array
  infostate: chex.Array
  action: chex.Array
  legal: chex.Array
  probability: chex.Array
  returns: chex.Array


class Simulator:
  """Episodes of the game whose public tree is ``tree`` (the tables live on the device)."""

  def __init__(self, tree: tree_lib.PublicTree, dtype=jnp.float32):
    self.length = tree.num_levels
    self.kind = jnp.asarray(tree.kind, jnp.int32)
    self.legal = jnp.asarray(tree.legal)
    self.up_child = jnp.asarray(tree.up_child)
    self.up_infostate = jnp.asarray(tree.up_infostate)
    self.pair_weight = jnp.asarray(tree.pair_weight, dtype)
    self.payoff = jnp.asarray(tree.payoff, dtype)
    self.chance_probability = jnp.asarray(tree.chance_probability, dtype)
    deal = tree.root_ranges[0][:, None] * tree.root_ranges[1][None, :] * tree.pair_weight[0]
    with np.errstate(divide="ignore"):  # impossible deals: log 0 = -inf, never drawn
      self.deal_logits = jnp.asarray(np.log(deal).reshape(-1), dtype)
    self.num_infostates = tree.max_infostates

  def _slots(self, node: chex.Array, s0: chex.Array, s1: chex.Array):
    """Every child slot (a, k) of ``node``: the child, both players' next infostates, and the pair
    weight of the world state it leads to (0 where the slot is empty or the pair impossible)."""
    child = self.up_child[node]  # [A, K]
    nxt = self.up_infostate[node]  # [A, K, 2, S]
    n0, n1 = nxt[:, :, 0, s0], nxt[:, :, 1, s1]
    safe = jnp.maximum(child, 0)
    weight = jnp.where(child >= 0, self.pair_weight[safe, n0, n1], 0.0)
    return child, n0, n1, weight

  def play(self, policy: chex.Array, rng: chex.PRNGKey) -> Trajectory:
    """One episode with both players acting by ``policy`` [N, S, A]."""
    rng, deal_key = jax.random.split(rng)
    deal = jax.random.categorical(deal_key, self.deal_logits)
    s0, s1 = deal // self.num_infostates, deal % self.num_infostates

    def step(carry, key):
      node, s0, s1, done = carry
      kind = self.kind[node]
      child, n0, n1, weight = self._slots(node, s0, s1)
      actor = jnp.clip(kind, 0, 1)
      own = jnp.where(actor == 0, s0, s1)
      decision = ~done & (kind <= public_game.PLAYER_1)
      legal = self.legal[node, own]
      acting = jnp.where(legal, policy[node, own], 0.0)
      action = jax.random.categorical(key, jnp.log(acting))
      # The slot taken: at a decision the action's slot whose world state exists; at a chance node
      # one slot drawn with P(c | s0, s1) = q(c) W_c / W_node.
      chance_weight = (self.chance_probability[jnp.maximum(child, 0)] * weight).reshape(-1)
      decision_weight = jnp.where(jnp.arange(child.shape[0])[:, None] == action, weight, 0.0)
      slot_weight = jnp.where(
        kind == public_game.CHANCE, chance_weight, decision_weight.reshape(-1)
      )
      slot = jax.random.categorical(
        jax.random.fold_in(key, 1), jnp.log(jnp.where(slot_weight > 0, slot_weight, 0.0))
      )
      terminal = kind == public_game.TERMINAL
      moved = ~done & ~terminal
      record = dict(
        decision=decision,
        actor=actor,
        node=node,
        infostate=own,
        action=jnp.where(decision, action, 0),
        legal=legal,
        probability=jnp.where(decision, acting[action], 1.0),
      )
      carry = (
        jnp.where(moved, child.reshape(-1)[slot], node),
        jnp.where(moved, n0.reshape(-1)[slot], s0),
        jnp.where(moved, n1.reshape(-1)[slot], s1),
        done | terminal,
      )
      return carry, record

    keys = jax.random.split(rng, self.length)
    (node, s0, s1, _), steps = jax.lax.scan(step, (jnp.int32(0), s0, s1, jnp.bool_(False)), keys)
    utility = self.payoff[node, s0, s1] / self.pair_weight[node, s0, s1]
    return Trajectory(**steps, returns=jnp.stack([utility, -utility]))
