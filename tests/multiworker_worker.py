"""One training process of tests/processes/trainer/: `python -m tests.multiworker_worker`.

Started with TF_CONFIG naming a two-worker cluster on 127.0.0.1, or without
one (a single worker). It trains through the Trainer's own `train` and
`export_model` under the strategy `make_strategy` picks, with checkpoints
when the setup names a folder (then deleted after the export, as `run_fn`
does), and writes what the test checks to OUT (JSON): its task, the records
its input shard read (by hash), its final weights (.npz beside OUT), whether
it is the chief, the Trainer's notes, and the eval accuracy.
"""

import hashlib
import json
import os
import sys

from runtime import startup

startup.start()

# isort: split
import numpy as np
import tensorflow as tf
import tensorflow_transform as tft

from dataset.declaration import Declaration
from dataset.training import TrainingConfig
from trainer import checkpoints, distribute, input_pipeline, run, warm_start


def main(setup_path: str, out: str) -> None:
  with open(setup_path) as f:
    setup = json.load(f)
  decl = Declaration.from_dict(setup["declaration"])
  config = TrainingConfig.from_dict(setup["training"])
  output = tft.TFTransformOutput(setup["transform_dir"])
  strategy = distribute.make_strategy(os.environ.get("TF_CONFIG"))

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

  saved = setup.get("checkpoints")
  model = run.train(setup["train_files"], setup["eval_files"], output, decl,
                    config, strategy, log_dir=setup.get("log_dir"), checkpoint_dir=saved)
  run.export_model(model, strategy, output, decl, setup["serving_dir"])
  checkpoints.discard(saved, strategy)
  np.savez(out + ".npz", *model.get_weights())
  correct = total = 0
  spec = output.transformed_feature_spec()
  for x, y in input_pipeline.make_dataset(setup["eval_files"], spec, decl, config, False):
    correct += int(np.sum(np.argmax(model(x, training=False), axis=1) == y.numpy()))
    total += len(y)
  with open(out, "w") as f:
    json.dump({"task": json.loads(os.environ.get("TF_CONFIG") or "{}").get("task"),
               "replicas": strategy.num_replicas_in_sync,
               "chief": distribute.is_chief(strategy), "records": hashes,
               "notes": warm_start.read_notes(setup["log_dir"]) if setup.get("log_dir")
               else [], "accuracy": correct / total}, f)


if __name__ == "__main__":
  main(sys.argv[1], sys.argv[2])
