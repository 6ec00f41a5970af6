"""Metrics a user can plot: rows of scalars appended to CSV files and, through tensorboardX, written
to TensorBoard event files in the same directory (``tensorboard --logdir WORKDIR``)."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
import csv
import numbers
import os
import pathlib
import struct
import time

import tensorboardX
from tensorboardX.proto import event_pb2

TENSORBOARD = "tensorboard"


def append_row(path: pathlib.Path, fields: Sequence[str], row: Mapping) -> None:
  """Appends ``row`` to the CSV at ``path`` (writing the header first if the file is new)."""
  new = not path.is_file()
  with path.open("a", newline="") as f:
    writer = csv.DictWriter(f, fieldnames=list(fields), extrasaction="ignore")
    if new:
      writer.writeheader()
    writer.writerow(row)


class MetricsWriter:
  """Tables of rows in ``directory``: ``TABLE.csv`` and TensorBoard scalars tagged ``TABLE/FIELD``
  (``TABLE/SERIES/FIELD`` for a table whose rows name their series, e.g. an evaluation setting;
  TensorBoard writes characters outside ``[A-Za-z0-9_./-]`` as "_": ``evaluation/SoG_100_1_/mean``).

  A resumed run appends to the CSVs and starts a new event file beside the old ones (TensorBoard
  reads them as one run). Each write is flushed, so a killed run keeps what it wrote.
  """

  def __init__(self, directory: str | pathlib.Path, tensorboard: bool = True):
    self.directory = pathlib.Path(directory)
    self.directory.mkdir(parents=True, exist_ok=True)
    # Event files are named by the second they open in; the suffix keeps a run resumed within the
    # same second from overwriting its predecessor's file.
    self._summary = (
      tensorboardX.SummaryWriter(
        str(self.directory / TENSORBOARD), filename_suffix=f".{os.getpid()}.{time.time_ns()}"
      )
      if tensorboard
      else None
    )

  def write(
    self,
    table: str,
    fields: Sequence[str],
    row: Mapping,
    step_field: str = "step",
    series_field: str | None = None,
  ) -> None:
    """Appends ``row`` (its ``fields``) to ``TABLE.csv`` and its numeric fields to TensorBoard at
    the row's ``step_field``."""
    if step_field not in row:
      raise ValueError(f"{table}: the row has no {step_field!r} field; it has {sorted(row)}")
    append_row(self.directory / f"{table}.csv", fields, row)
    if self._summary is None:
      return
    prefix = f"{table}/{row[series_field]}" if series_field else table
    step = int(row[step_field])
    for field in fields:
      value = row.get(field)
      if field in (step_field, series_field) or isinstance(value, bool):
        continue
      if isinstance(value, str):
        try:
          value = float(value)
        except ValueError:
          continue
      if isinstance(value, numbers.Real):
        self._summary.add_scalar(f"{prefix}/{field}", float(value), global_step=step)
    self._summary.flush()

  def close(self) -> None:
    if self._summary is not None:
      self._summary.close()
      self._summary = None

  def __enter__(self) -> MetricsWriter:
    return self

  def __exit__(self, *exc) -> None:
    self.close()


def read_scalars(directory: str | pathlib.Path) -> dict[str, list[tuple[int, float]]]:
  """The scalars of every event file under ``directory`` (e.g. a work directory's ``tensorboard/``):
  {tag: [(step, value), ...]} in file and write order, without TensorFlow or TensorBoard installed.

  Event files are TFRecord files: per record a little-endian uint64 length, its 4-byte CRC, the
  serialised ``Event`` and its 4-byte CRC (not checked here)."""
  scalars: dict[str, list[tuple[int, float]]] = {}
  for path in sorted(pathlib.Path(directory).rglob("events.out.tfevents.*")):
    data, offset = path.read_bytes(), 0
    while offset + 12 <= len(data):
      (length,) = struct.unpack_from("<Q", data, offset)
      event = event_pb2.Event.FromString(data[offset + 12 : offset + 12 + length])
      offset += 12 + length + 4
      for value in event.summary.value:
        scalars.setdefault(value.tag, []).append((event.step, value.simple_value))
  return scalars
