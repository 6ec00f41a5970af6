"""Determinized MCTS (sog.search.pimc): worlds drawn from what the public history allows, values
signed for turns that do not alternate, a batch of decisions searched as each alone, the win found
in a perfect-information game, and bad settings refused."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sog.games import load
from sog.games import public_game
from sog.games import worlds
from sog.search import pimc
from sog.search.pool import belief_paths


def test_worlds_are_drawn_from_what_the_public_history_allows():
  """glasses_hidden after Mr X's first (hidden) taxi move: he started at one of stations 4-8 and
  may now stand at any station one taxi ride from those that no detective holds (2-10); the
  detectives' worlds are drawn over exactly those, each as often (the pair weight W(s0, s1) is one
  on the stations the history allows and zero elsewhere)."""
  game = load("scotland_yard(map=glasses_hidden)").public_game
  path = jnp.asarray(belief_paths.padded_path([0], game.max_moves))  # slot 0: a hidden taxi move
  state, weight = belief_paths.along(game, path)
  assert int(game.kind(state)) == public_game.PLAYER_1
  draws = np.asarray(
    pimc.draw_opponents(weight, jnp.int32(1), jnp.int32(0), jax.random.PRNGKey(0), 20_000)
  )
  assert set(np.unique(draws)) == set(range(1, 10))  # stations 2-10, 0-based
  observed = np.bincount(draws, minlength=11)[1:10] / draws.size
  np.testing.assert_allclose(observed, np.full(9, 1 / 9), atol=0.015)


def test_a_card_player_draws_only_the_cards_the_deal_leaves():
  """Kuhn's root, player 0 holding the jack: the opponent holds the queen or the king, each half
  the time (card removal through the deal's pair weights)."""
  game = load("kuhn_poker").public_game
  weight = jnp.asarray(public_game.root_weight(game), jnp.float32)
  draws = np.asarray(
    pimc.draw_opponents(weight, jnp.int32(0), jnp.int32(0), jax.random.PRNGKey(1), 4_000)
  )
  assert set(np.unique(draws)) == {1, 2}
  assert abs((draws == 1).mean() - 0.5) < 0.03


def test_the_discount_follows_who_moves_next():
  """glasses_hidden: the first detective's move leads to the second detective's (the same player:
  discount +1), the second's to Mr X's (the other: -1); no reward before the end."""
  game = load("scotland_yard(map=glasses_hidden)").public_game
  state, _ = belief_paths.along(game, jnp.asarray(belief_paths.padded_path([0], game.max_moves)))
  world = worlds.World(state=state, infostates=jnp.array([4, 0], jnp.int32))  # Mr X at 5
  step = pimc.recurrent_fn(game)
  batch = lambda w: jax.tree.map(lambda x: x[None], w)  # noqa: E731

  def first_legal(world):
    return jnp.argmax(game.legal(world.state)[world.infostates[1]])[None]

  out, second = step(None, jax.random.PRNGKey(0), first_legal(world), batch(world))
  assert float(out.discount[0]) == 1.0 and float(out.reward[0]) == 0.0
  second = jax.tree.map(lambda x: x[0], second)
  assert int(second.state.mover) == 2
  out, third = step(None, jax.random.PRNGKey(1), first_legal(second), batch(second))
  assert float(out.discount[0]) == -1.0 and float(out.reward[0]) == 0.0
  assert int(third.state.mover[0]) == 0


@pytest.mark.parametrize(
  ("path", "best"),
  [
    ([0, 3, 1, 4], 2),  # X to move, two in the top row: the win
    ([0, 4, 1], 2),  # O to move, X two in the top row: the one move that does not lose
  ],
)
def test_pimc_takes_the_win_and_blocks_the_loss_in_tic_tac_toe(path, best):
  """Tic-tac-toe, one world: X takes its win; O blocks X's, which only a value of X's next move
  seen from O's side (the -1 discount, player 1's sign) tells apart from O's other moves."""
  player = pimc.PIMC(load("tic_tac_toe"), simulations=400, worlds=1)
  assert player.act(jax.random.PRNGKey(0), path, 0) == best


def test_the_pimc_bot_plays_scotland_yard_through_openspiel():
  """glasses_hidden through the OpenSpiel bridge: PIMCBot against the random bot, seats swapped,
  every move legal and every game decided."""
  from open_spiel.python.algorithms import evaluate_bots
  import pyspiel

  from sog import openspiel as sog_openspiel

  game = load("scotland_yard(map=glasses_hidden)")
  player = pimc.PIMC(game, simulations=40, worlds=4)
  os_game = sog_openspiel.openspiel_game(game)
  for seat in (0, 1):
    bots = [None, None]
    bots[seat] = sog_openspiel.PIMCBot(player, seat, seed=seat)
    bots[1 - seat] = pyspiel.make_uniform_random_bot(1 - seat, seat)
    returns = evaluate_bots.evaluate_bots(
      os_game.new_initial_state(), bots, np.random.RandomState(seat)
    )
    assert sorted(returns) == [-1.0, 1.0]


def test_a_batch_of_decisions_is_each_decision_alone():
  """Kuhn: two decisions searched in one vmapped call get the visits each gets alone, same key."""
  game = load("kuhn_poker")
  search = lambda key, path, infostate: pimc.root_visits(  # noqa: E731
    game.public_game, 16, 4, key, path, infostate
  )[0]
  paths = jnp.asarray(
    np.stack([belief_paths.padded_path(p, game.max_moves) for p in ([], [1])]), jnp.int32
  )
  infostates = jnp.array([0, 2], jnp.int32)
  keys = jax.random.split(jax.random.PRNGKey(2), 2)
  batched = np.asarray(jax.jit(jax.vmap(search))(keys, paths, infostates))
  alone = np.stack([np.asarray(jax.jit(search)(keys[i], paths[i], infostates[i])) for i in (0, 1)])
  np.testing.assert_array_equal(batched, alone)
  assert (batched.sum(-1) == 4 * 16).all()


@pytest.mark.parametrize(
  ("kwargs", "message"),
  [
    ({"simulations": 5, "worlds": 10}, "simulations"),
    ({"simulations": 1000, "worlds": 3}, "multiple of worlds=3"),
    ({"simulations": 100, "worlds": 0}, "worlds"),
  ],
)
def test_pimc_refuses_bad_settings(kwargs, message):
  with pytest.raises(ValueError, match=message):
    pimc.PIMC(load("kuhn_poker"), **kwargs)


def test_pimc_refuses_what_is_no_decision():
  """Kuhn: an infostate out of range, a path to the end of the game, and (glasses_hidden's root) a
  station Mr X cannot start at are refused by name, not searched."""
  player = pimc.PIMC(load("kuhn_poker"), simulations=8, worlds=2)
  with pytest.raises(ValueError, match=r"infostates must be ints in 0\.\.2"):
    player.act(jax.random.PRNGKey(0), [], 3)
  with pytest.raises(ValueError, match="no player's decision"):
    player.act(jax.random.PRNGKey(0), [0, 0], 0)  # check, check: the showdown
  hidden = pimc.PIMC(load("scotland_yard(map=glasses_hidden)"), simulations=8, worlds=2)
  with pytest.raises(ValueError, match="rules the infostate out"):
    hidden.act(jax.random.PRNGKey(0), [], 0)  # station 1: not a start
  assert hidden.act(jax.random.PRNGKey(0), [], 4) in range(hidden.game.public_game.num_actions)
