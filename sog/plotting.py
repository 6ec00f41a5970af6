"""PNG line plots for scripts (matplotlib, headless)."""

from __future__ import annotations

import pathlib
from collections.abc import Mapping, Sequence


def line_plot(path: str | pathlib.Path, series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
              title: str, xlabel: str, ylabel: str, logx: bool = False, logy: bool = True) -> None:
  """Writes the named (x, y) series as one line plot to ``path``."""
  import matplotlib
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt
  path = pathlib.Path(path)
  path.parent.mkdir(parents=True, exist_ok=True)
  fig, ax = plt.subplots(figsize=(6, 4))
  for label, (x, y) in series.items():
    ax.plot(x, y, marker="o" if len(x) < 30 else None, label=label)
  ax.set_xscale("log" if logx else "linear")
  ax.set_yscale("log" if logy else "linear")
  ax.set_xlabel(xlabel)
  ax.set_ylabel(ylabel)
  ax.set_title(title, fontsize=10)
  if len(series) > 1:
    ax.legend()
  ax.grid(True, which="both", alpha=0.3)
  fig.tight_layout()
  fig.savefig(path, dpi=120)
  plt.close(fig)
  print(f"wrote {path}")
