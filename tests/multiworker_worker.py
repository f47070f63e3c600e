"""One worker of the multi-worker test: `python -m tests.multiworker_worker`.

Started by tests/test_training.py with TF_CONFIG naming a two-worker cluster
on 127.0.0.1. It trains through the Trainer's own `train` and `export_model`
under the strategy `make_strategy` picks, then writes what the test checks to
OUT (JSON): its task, the records its input shard read (by hash), its final
weights (.npz beside OUT), and whether it is the chief.
"""

import hashlib
import json
import os
import sys

import trainer  # noqa: F401  (the Keras choice, before TF loads Keras)

# isort: split
import numpy as np
import tensorflow as tf
import tensorflow_transform as tft

from dataset.declaration import Declaration
from trainer import distribute, input_pipeline, run
from trainer.config import TrainingConfig


def main(setup_path: str, out: str) -> None:
  with open(setup_path) as f:
    setup = json.load(f)
  decl = Declaration.from_dict(setup["declaration"])
  config = TrainingConfig.from_dict(setup["training"])
  output = tft.TFTransformOutput(setup["transform_dir"])
  strategy = distribute.make_strategy(os.environ["TF_CONFIG"])

  # The input context the strategy gives this worker's pipeline: the records
  # its shard reads in one pass are what the Trainer's training data reads.
  contexts = []
  strategy.distribute_datasets_from_function(
      lambda ctx: contexts.append(ctx) or tf.data.Dataset.range(1))
  ctx = contexts[0]
  files = input_pipeline.list_files(setup["train_files"])
  shard = (ctx.num_input_pipelines, ctx.input_pipeline_id)
  read = input_pipeline.read(files, "GZIP", True, False, shard).unbatch()
  hashes = sorted(hashlib.sha1(r.numpy()).hexdigest() for r in read)

  model = run.train(setup["train_files"], setup["eval_files"], output, decl,
                    config, strategy)
  run.export_model(model, strategy, output, decl, setup["serving_dir"])
  np.savez(out + ".npz", *model.get_weights())
  with open(out, "w") as f:
    json.dump({"task": json.loads(os.environ["TF_CONFIG"])["task"],
               "replicas": strategy.num_replicas_in_sync,
               "chief": distribute.is_chief(strategy), "records": hashes}, f)


if __name__ == "__main__":
  main(sys.argv[1], sys.argv[2])
