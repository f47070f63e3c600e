"""Training curves, drawn from the TensorBoard logs the Trainer writes.

The Trainer writes `<model_run>/train` and `<model_run>/validation`
(trainer/curves.py); each scalar `epoch_<metric>` becomes one chart with a
line per split. The same folder opens in TensorBoard.
"""

import collections
import io
import os
from typing import Dict, List, Tuple

import matplotlib

matplotlib.use("Agg")  # no display: draw to PNG bytes

# isort: split
import matplotlib.pyplot as plt
import tensorflow as tf

Curves = Dict[str, Dict[str, List[Tuple[int, float]]]]  # metric -> split -> points


def read_curves(log_dir: str) -> Curves:
  """metric -> split -> [(epoch, value)], from the event files under log_dir."""
  curves: Curves = collections.defaultdict(dict)
  for split in ("train", "validation"):
    points = collections.defaultdict(dict)
    for path in sorted(tf.io.gfile.glob(os.path.join(log_dir, split, "events.out.tfevents.*"))):
      for event in tf.compat.v1.train.summary_iterator(path):
        for value in event.summary.value:
          if not value.tag.startswith("epoch_"):
            continue
          number = (float(tf.make_ndarray(value.tensor)) if value.HasField("tensor")
                    else value.simple_value)
          points[value.tag[len("epoch_"):]][event.step] = number
    for metric, by_step in points.items():
      curves[metric][split] = sorted(by_step.items())
  return dict(curves)


def chart(metric: str, per_split: Dict[str, List[Tuple[int, float]]]) -> bytes:
  """One metric's curves, a line per split, as PNG bytes."""
  figure, axes = plt.subplots(figsize=(5, 3.2), dpi=100)
  for split, points in per_split.items():
    axes.plot([step + 1 for step, _ in points], [v for _, v in points],
              marker="o", label="eval" if split == "validation" else split)
  axes.set_xlabel("epoch")
  axes.set_ylabel(metric)
  axes.set_title(metric)
  axes.grid(alpha=0.3)
  axes.legend()
  figure.tight_layout()
  out = io.BytesIO()
  figure.savefig(out, format="png")
  plt.close(figure)
  return out.getvalue()
