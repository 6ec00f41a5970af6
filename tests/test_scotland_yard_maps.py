"""Scotland Yard map files: loading by path, clear errors for malformed files, the private start."""

import dataclasses
import json

import numpy as np
import pytest

import sog.games
from sog.games import scotland_yard_map

_GLASSES = json.loads((scotland_yard_map.MAPS_DIR / "glasses.json").read_text())


def _write(tmp_path, data, name="custom.json"):
  path = tmp_path / name
  path.write_text(json.dumps(data))
  return path


def test_map_file_outside_the_package_loads_by_path(tmp_path):
  path = _write(tmp_path, _GLASSES, "my_glasses.json")
  game = sog.games.load(f"scotland_yard(map={path})")
  shipped = sog.games.load("scotland_yard(map=glasses)")
  assert game.name == f"scotland_yard(map={path})"
  assert game.tree.size_summary() == shipped.tree.size_summary()
  np.testing.assert_array_equal(game.tree.parent, shipped.tree.parent)
  np.testing.assert_array_equal(game.tree.legal, shipped.tree.legal)
  np.testing.assert_array_equal(game.tree.encoding, shipped.tree.encoding)


def test_map_file_name_defaults_to_its_stem(tmp_path):
  data = {k: v for k, v in _GLASSES.items() if k != "name"}
  assert (
    scotland_yard_map.ScotlandYardMap.load(str(_write(tmp_path, data, "harbour.json"))).name
    == "harbour"
  )


def _mutated(**changes):
  data = json.loads(json.dumps(_GLASSES))
  for key, value in changes.items():
    if value is None:
      del data[key]
    else:
      data[key] = value
  return data


@pytest.mark.parametrize(
  "changes, message",
  [
    (dict(stations=None), "field 'stations' is missing"),
    (dict(stations=1), "field 'stations' has 1"),
    (dict(stations="eleven"), "field 'stations'"),
    (dict(edges=[[1, 12, "taxi"]]), "field 'edges' has a bad edge \\[1, 12, 'taxi'\\]"),
    (dict(edges=[[1, 2, "boat"]]), "field 'edges' has a bad edge"),
    (dict(edges=[[3, 3, "taxi"]]), "field 'edges' has a bad edge"),
    (dict(edges=[[1, 2]]), "field 'edges' has a bad edge"),
    (dict(edges="1-2"), "field 'edges' is not a list"),
    (dict(transports=[]), "field 'transports'"),
    (dict(mr_x_start=0), "field 'mr_x_start' has 0"),
    (dict(mr_x_start=[5, 12]), "field 'mr_x_start' has 12"),
    (dict(mr_x_start=[5, 5]), "field 'mr_x_start'.*distinct"),
    (dict(detective_starts=[1, 14]), "field 'detective_starts' has 14"),
    (dict(detective_starts=[1, 6]), "field 'detective_starts' shares stations with Mr X's starts"),
    (dict(detective_starts=[]), "field 'detective_starts' names no station"),
    (dict(mr_x_tickets={"boat": 2}), "field 'mr_x_tickets'.*among \\['taxi'\\]"),
    (dict(detective_tickets={"taxi": -1}), "field 'detective_tickets' has -1"),
    (dict(rounds=0), "field 'rounds' has 0"),
    (dict(reveal_rounds=[3, 6]), "field 'reveal_rounds' has 6; expected an integer in 1..5"),
    (dict(reveal_rounds=[0]), "field 'reveal_rounds' has 0"),
    (dict(colour="red"), "field 'colour' is unknown; valid fields: name, source, stations"),
    (dict(detectives=3), "field 'detectives' has 3; expected an integer in 1..2"),
    (dict(detectives=0), "field 'detectives' has 0"),
    (dict(mr_x_black_tickets=-1), "field 'mr_x_black_tickets' has -1"),
    (dict(mr_x_double_moves="two"), "field 'mr_x_double_moves' has 'two'"),
    (dict(tickets_to_mr_x=1), "field 'tickets_to_mr_x' has 1; expected true or false"),
    (dict(enumerable="no"), "field 'enumerable' has 'no'; expected true or false"),
    (
      dict(actions="global"),
      "field 'actions' has 'global'; expected one of by_destination, by_station",
    ),
  ],
)
def test_malformed_map_files_name_the_field(tmp_path, changes, message):
  path = _write(tmp_path, _mutated(**changes))
  with pytest.raises(ValueError, match=message):
    sog.games.load(f"scotland_yard(map={path})")


def test_unreadable_map_files_raise_clear_errors(tmp_path):
  with pytest.raises(ValueError, match="does not exist"):
    sog.games.load(f"scotland_yard(map={tmp_path / 'missing.json'})")
  bad = tmp_path / "bad.json"
  bad.write_text("{not json")
  with pytest.raises(ValueError, match="is not valid JSON"):
    sog.games.load(f"scotland_yard(map={bad})")
  bad.write_text("[1, 2]")
  with pytest.raises(ValueError, match="must hold a JSON object"):
    sog.games.load(f"scotland_yard(map={bad})")
  with pytest.raises(ValueError, match=r"or a path to a \.json map file"):
    sog.games.load("scotland_yard(map=london.txt)")


def test_private_start_is_a_uniform_deal_only_mr_x_sees(tmp_path):
  game = sog.games.load(f"scotland_yard(map={_write(tmp_path, _mutated(mr_x_start=[5, 6, 7]))})")
  tree = game.tree
  np.testing.assert_allclose(
    tree.root_ranges[0], np.where(np.isin(np.arange(11), [4, 5, 6]), 1 / 3, 0)
  )
  np.testing.assert_array_equal(np.flatnonzero(tree.valid[0, 0]), [4, 5, 6])
  # Nothing about the start is public: the detectives' encoding marks Mr X's station as not yet
  # known, and after his first move from 6 he may be at any neighbour of 5, 6 or 7.
  glasses = sog.games.load("scotland_yard(map=glasses)")
  assert game.public_game.encoding_size == glasses.public_game.encoding_size + 1
  assert tree.encoding[0][-1] == 1.0
  child = int(np.flatnonzero(tree.parent == 0)[0])
  np.testing.assert_array_equal(np.flatnonzero(tree.valid[child, 0]), [2, 3, 4, 5, 6, 7, 8])

  # OpenSpiel's game opens with a chance node over the same starts (0-based stations).
  from sog.openspiel import bridge as openspiel_bridge

  root = openspiel_bridge.openspiel_game(game).new_initial_state()
  assert root.is_chance_node() and root.chance_outcomes() == [(4, 1 / 3), (5, 1 / 3), (6, 1 / 3)]


@pytest.mark.parametrize("name", scotland_yard_map.available_maps())
def test_every_shipped_map_parses_under_its_file_name(name):
  assert scotland_yard_map.ScotlandYardMap.load(name).name == name


def test_glasses_hidden6_is_glasses_hidden_with_one_more_round_and_ticket():
  """The benchmark map differs from glasses_hidden only in its length
  (docs/results/scotland_yard.md, "glasses_hidden6")."""
  hidden, longer = (
    scotland_yard_map.ScotlandYardMap.load(n) for n in ("glasses_hidden", "glasses_hidden6")
  )
  assert longer.rounds == hidden.rounds + 1
  assert longer.mr_x_tickets == tuple(t + 1 for t in hidden.mr_x_tickets)
  assert longer.detective_tickets == tuple(t + 1 for t in hidden.detective_tickets)
  assert (
    dataclasses.replace(
      longer,
      name=hidden.name,
      rounds=hidden.rounds,
      mr_x_tickets=hidden.mr_x_tickets,
      detective_tickets=hidden.detective_tickets,
    )
    == hidden
  )
