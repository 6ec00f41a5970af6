"""SoG's published exploitability (Schmid et al. 2023, fig. 3), for plots and tables to compare
with.

Each entry maps s of SoG(s, 1) to (untrained, trained) mean exploitability over 50 seeds, in the
game's reward units (chips for Leduc: multiply by 1000 for mbb/h), from one SoG(100,1) training run:
the untrained network at 0 steps, the trained one after 150k steps (Leduc) or 50k steps (glasses
map).
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Fig3:
  """One panel of SoG's fig. 3: exploitability of SoG(s, 1) before and after training."""

  trained_steps: int
  untrained: dict[int, float]
  trained: dict[int, float]


FIG3 = {
  "leduc_poker": Fig3(
    trained_steps=150_000,
    untrained={33: 0.850, 100: 0.774, 300: 0.540, 1000: 0.145},
    trained={33: 0.202, 100: 0.109, 300: 0.061, 1000: 0.024},
  ),
  "scotland_yard(map=glasses)": Fig3(
    trained_steps=50_000,
    untrained={33: 0.41, 100: 0.19, 300: 0.16, 1000: 0.045},
    trained={33: 0.130, 100: 0.051, 300: 0.031, 1000: 0.016},
  ),
}


def fig3(game_name: str) -> Fig3 | None:
  """The panel for ``game_name``, or None if SoG's fig. 3 has none."""
  return FIG3.get(game_name)


def exploitability_unit(game_name: str) -> tuple[float, str]:
  """(scale, unit) the papers report ``game_name``'s exploitability in: mbb/h (milli-big-blinds a
  hand, chips x 1000) for poker, the game's utility units elsewhere."""
  return (1000.0, "mbb/h") if "poker" in game_name else (1.0, "utility units")


def fig3_references(game_name: str, scale: float = 1.0) -> dict[str, dict[int, float]]:
  """SoG's fig. 3 points for ``game_name`` as plot references {label: {s: value x scale}}: the
  trained and the untrained network; empty where fig. 3 has no panel for the game."""
  panel = fig3(game_name)
  if panel is None:
    return {}
  return {
    f"SoG, fig. 3, trained ({panel.trained_steps // 1000}k steps)": {
      s: v * scale for s, v in panel.trained.items()
    },
    "SoG, fig. 3, untrained": {s: v * scale for s, v in panel.untrained.items()},
  }


@dataclasses.dataclass(frozen=True)
class ReBeLTable2:
  """ReBeL's Liar's Dice exploitability (Brown et al. 2020, table 2): ReBeL with depth-2 CFR-D
  subgames and 1,024 iterations (the average of 1,024 sampled plays' policies, the mean of three
  checkpoints), and CFR on the full game for 1,024 iterations."""

  rebel: float
  full_game_cfr: float


REBEL_TABLE2 = {
  "liars_dice(faces=4)": ReBeLTable2(rebel=0.017, full_game_cfr=0.001),
  "liars_dice(faces=5)": ReBeLTable2(rebel=0.015, full_game_cfr=0.001),
  "liars_dice(faces=6)": ReBeLTable2(rebel=0.024, full_game_cfr=0.002),
}


def rebel_table2(game_name: str) -> ReBeLTable2 | None:
  """ReBeL's table 2 row for ``game_name``, or None if the table has none."""
  return REBEL_TABLE2.get(game_name)


# Published exploitability of the baselines' own implementations, as horizontal reference lines for
# ``scripts/baselines.py``: {game: {label: exploitability}}. NashConv figures are halved (two-player
# zero-sum exploitability is NashConv / 2). Values read off a figure are marked "≈" in the label.
BASELINE_ANCHORS = {
  # OpenSpiel's R-NaD (the DeepNash authors' reference code, removed from OpenSpiel in 2024):
  # rnad/rnad_nashconv_leduc.png, 5 seeds, (256, 256) MLP, 512 trajectories a learner step; the
  # NashConv settles at ≈ 0.17-0.18 from about 2M learner steps to the last, 7M.
  "leduc_poker": {"R-NaD, OpenSpiel's figure, 7M steps x 512 (≈)": 0.0875},
  # ReBeL's table 2: CFR on the full game for 1,024 iterations.
  **{
    name: {"CFR, 1,024 iterations (ReBeL's table 2)": row.full_game_cfr}
    for name, row in REBEL_TABLE2.items()
  },
}


def baseline_anchors(game_name: str) -> dict[str, float]:
  """The published baseline figures for ``game_name`` (label -> exploitability), possibly empty."""
  return dict(BASELINE_ANCHORS.get(game_name, {}))
