"""PNG line plots for scripts (matplotlib, headless)."""

from __future__ import annotations

import itertools
import pathlib
from collections.abc import Mapping, Sequence

_BASELINE_STYLES = (":", "-.", (0, (5, 2, 1, 2, 1, 2)))


def line_plot(path: str | pathlib.Path, series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
              title: str, xlabel: str, ylabel: str, logx: bool = False, logy: bool = True,
              levels: Mapping[str, float] | None = None) -> None:
  """Writes the named (x, y) series as one line plot to ``path``; ``levels`` are labelled
  horizontal reference lines (e.g. another agent's measured value). On a log y axis, values <= 0
  (an exactly solved game's exploitability) are drawn as triangles at a floor a decade below the
  smallest positive value, and their series' label says so."""
  import matplotlib
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt
  path = pathlib.Path(path)
  path.parent.mkdir(parents=True, exist_ok=True)
  fig, ax = plt.subplots(figsize=(6, 4))
  for label, (x, y, marker) in drawable(series, levels, logy).items():
    ax.plot(x, y, marker=marker, label=label)
  for (label, y), style in zip((levels or {}).items(), itertools.cycle(_BASELINE_STYLES)):
    ax.axhline(y, linestyle=style, linewidth=1.2, color="gray", label=label)
  ax.set_xscale("log" if logx else "linear")
  _finish(plt, fig, ax, path, title, xlabel, ylabel, logy,
          legend=len(series) + len(levels or {}) > 1)


def drawable(series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
             levels: Mapping[str, float] | None, logy: bool
             ) -> dict[str, tuple[Sequence[float], Sequence[float], str | None]]:
  """{label: (x, y, marker)} as :func:`line_plot` draws them: on a log axis a series with values
  <= 0 has them at a floor a decade below the smallest positive value (of the series and
  ``levels``), triangle markers, and a label that says so."""
  positive = [v for _, y in series.values() for v in y if v > 0] + [
      v for v in (levels or {}).values() if v > 0]
  floor = min(positive, default=1.0) / 10
  out = {}
  for label, (x, y) in series.items():
    marker = "o" if len(x) < 30 else None
    if logy and any(v <= 0 for v in y):
      y = [v if v > 0 else floor for v in y]
      label, marker = f"{label} (\u25bc: exactly 0)", "v"
    out[label] = (x, y, marker)
  return out


def ribbon_plot(path: str | pathlib.Path,
                series: Mapping[str, tuple[Sequence[float], Sequence[float], Sequence[float],
                                           Sequence[float]]],
                title: str, xlabel: str, ylabel: str,
                markers: Mapping[str, Sequence[tuple[float, float]]] | None = None,
                levels: Mapping[str, float] | None = None, reference_label: str = "reference",
                baselines: Mapping[str, Mapping[str, float]] | None = None,
                logy: bool = True) -> None:
  """Writes each named series (x, low, middle, high) as a line with a low-high ribbon to ``path``.

  Reference values drawn in the series' colour: ``markers[name]`` as (x, y) crosses and
  ``levels[name]`` as a dashed horizontal line (e.g. a paper's value at a step beyond the x range).
  ``baselines[label][name]`` is a horizontal line in its own line style per label (e.g. another
  model's value at the series' setting), in the series' colour, or gray where no series has the name.
  """
  import matplotlib
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt
  path = pathlib.Path(path)
  path.parent.mkdir(parents=True, exist_ok=True)
  markers, levels = markers or {}, levels or {}
  fig, ax = plt.subplots(figsize=(7, 4.5))
  colours = {}
  for label, (x, low, middle, high) in series.items():
    line, = ax.plot(x, middle, marker="o" if len(x) < 30 else None, label=label)
    colours[label] = line.get_color()
    ax.fill_between(x, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
    if label in markers:
      mx, my = zip(*markers[label])
      ax.plot(mx, my, linestyle="none", marker="x", markersize=8, color=line.get_color())
    if label in levels:
      ax.axhline(levels[label], linestyle="--", linewidth=1, color=line.get_color())
  if markers or levels:
    ax.plot([], [], linestyle="--", marker="x", color="gray", label=reference_label)
  for (label, values), style in zip((baselines or {}).items(), itertools.cycle(_BASELINE_STYLES)):
    for name, y in values.items():
      ax.axhline(y, linestyle=style, linewidth=1.2, color=colours.get(name, "gray"))
    ax.plot([], [], linestyle=style, color="gray", label=label)
  _finish(plt, fig, ax, path, title, xlabel, ylabel, logy, legend=True)


def _finish(plt, fig, ax, path: pathlib.Path, title: str, xlabel: str, ylabel: str, logy: bool,
            legend: bool) -> None:
  """Scales, labels, legend and grid, then writes the figure to ``path`` and closes it."""
  ax.set_yscale("log" if logy else "linear")
  ax.set_xlabel(xlabel)
  ax.set_ylabel(ylabel)
  ax.set_title(title, fontsize=10)
  if legend:
    if len(ax.get_legend_handles_labels()[1]) > 6:  # many lines: the legend goes beside the axes
      fig.set_size_inches(fig.get_size_inches()[0] + 3.5, fig.get_size_inches()[1])
      ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    else:
      ax.legend(fontsize=8)
  ax.grid(True, which="both", alpha=0.3)
  fig.tight_layout()
  fig.savefig(path, dpi=120)
  plt.close(fig)
  print(f"wrote {path}")
