"""The Trainer's ceiling: the project's model trained on batches already in
memory, so no input pipeline at all; images per second.

    .venv/bin/python -m bench.model_ceiling DATASET.yaml [--steps N]

bench/e2e_bench.py runs it beside the photos pipelines, in a fresh process,
so that a Trainer's images/s can be read against what the model itself
allows on this machine: where the two are close, only less compute (a
GPU, a smaller model) makes the Trainer faster. The model is built from the
declaration as the Trainer builds it (trainer/model.py), with the photos
benchmark's random flips; the batch is random pixels, the steps are timed
after two warm-up steps.
"""

import argparse
import json
import time

from runtime import startup


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(prog="python -m bench.model_ceiling",
                                   description=__doc__.split("\n\n")[0])
  parser.add_argument("dataset", help="the dataset declaration (image features)")
  parser.add_argument("--steps", type=int, default=20, help="timed steps (default 20)")
  parser.add_argument("--batch-size", type=int, default=64)
  return parser


def main(argv=None) -> int:
  args = build_parser().parse_args(argv)
  import numpy as np
  import tensorflow as tf

  from dataset import declaration
  from dataset.training import TrainingConfig
  from trainer import model as model_lib
  decl = declaration.load(args.dataset)
  config = TrainingConfig(batch_size=args.batch_size, flip_left_right=True)
  model = model_lib.build_model(decl, {}, config)
  rng = np.random.default_rng(0)
  features = {f.name: tf.constant(rng.integers(0, 256, (args.batch_size, *f.image.shape),
                                               dtype=np.uint8))
              for f in decl.of_kind("image")}
  labels = tf.constant(rng.integers(0, decl.label.num_classes, args.batch_size))
  batches = tf.data.Dataset.from_tensors((features, labels)).repeat()
  model.fit(batches, steps_per_epoch=2, epochs=1, verbose=0)  # warm-up: trace, allocate
  start = time.perf_counter()
  model.fit(batches, steps_per_epoch=args.steps, epochs=1, verbose=0)
  seconds = time.perf_counter() - start
  print(json.dumps({"steps": args.steps, "seconds": round(seconds, 2),
                    "images_per_s": round(args.steps * args.batch_size / seconds, 1)}))
  return 0


if __name__ == "__main__":
  startup.start(quiet=True)  # TensorFlow quiet about CUDA, as every command
  raise SystemExit(main())
