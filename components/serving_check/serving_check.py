"""ServingCheck: between the Evaluator and the Pusher, the candidate must
really serve.

TFX's InfraValidator would do this, but it does not compile for Kubeflow
Pipelines v2 (NotImplementedError), so this ordinary component does it on
both runners. For a model the Evaluator blessed, it takes a few hundred of
this run's eval examples, removes their label, as a client's request has
none, and starts `python -m components.serving_check.check` (components/serving_check/check.py): a process
that loads the SavedModel with TensorFlow alone, as a model server would,
sends the examples through `serving_examples`, checks every output against
the signature's contract, sends them again as a JSON client's REST request
through `serving_default` (the same answers are required), and measures
latency at batch 1 and 64.

Its output is an InfraBlessing, the artifact InfraValidator writes and TFX's
Pusher already reads: `blessed` 1 or 0, so a model that fails is not
pushed. It also records `checked`, the `reason` in one line, and each p50
and p99 in milliseconds as custom properties (ML Metadata; the run's
outcome and report read them), and the whole result in
`serving_check.json`. A model the Evaluator did not bless is not checked:
it will not be pushed anyway.
"""

import json
import os
import subprocess
import sys
import tempfile
from typing import Optional

import tensorflow as tf
from absl import logging
from tfx.dsl.component.experimental.annotations import InputArtifact, OutputArtifact, Parameter
from tfx.dsl.component.experimental.decorators import component
from tfx.types import standard_artifact_utils, standard_artifacts
from tfx.utils import path_utils

from components.serving_check import check
from components.serving_check.check import RESULT_FILE

EXAMPLES = 256  # eval examples sent, at most: "a few hundred"
# The marker files InfraValidator writes (tfx/components/infra_validator).
BLESSED, NOT_BLESSED = "INFRA_BLESSED", "INFRA_NOT_BLESSED"


def eval_requests(examples, splits: list, label: str, path: str) -> int:
  """Writes up to EXAMPLES serialized eval examples, without the label, to
  a TFRecord file at path; returns how many."""
  files = []
  for split in splits:
    folder = standard_artifact_utils.get_split_uri([examples], split)
    files += sorted(tf.io.gfile.glob(os.path.join(folder, "*")))
  count = 0
  with tf.io.TFRecordWriter(path) as writer:
    for record in tf.data.TFRecordDataset(files, compression_type="GZIP").take(EXAMPLES):
      example = tf.train.Example.FromString(record.numpy())
      if label in example.features.feature:
        del example.features.feature[label]
      writer.write(example.SerializeToString())
      count += 1
  return count


def run_check(model_dir: str, requests: str, contract: dict, budget: dict,
              latency_seconds: Optional[float] = None) -> dict:
  """components/serving_check/check.py in a process of its own; its result, or a failed
  `loads` check when the process died before writing one. `latency_seconds`:
  components/serving_check/check.py's LATENCY_SECONDS when None."""
  with tempfile.TemporaryDirectory() as tmp:
    request = {"model": model_dir, "examples": requests, "contract": contract,
               "budget": budget, "out": os.path.join(tmp, "result.json")}
    if latency_seconds is not None:
      request["latency_seconds"] = latency_seconds
    request_path = os.path.join(tmp, "request.json")
    with open(request_path, "w") as f:
      json.dump(request, f)
    proc = subprocess.run([sys.executable, "-m", "components.serving_check.check", request_path],
                          capture_output=True, text=True, timeout=1800)
    if os.path.exists(request["out"]):
      with open(request["out"]) as f:
        return json.load(f)
  lines = [x for x in proc.stderr.strip().splitlines() if x.strip()] or ["no output"]
  reason = (f"loads: the process loading {model_dir} died (exit {proc.returncode}): "
            f"{lines[-1].strip()[:300]}")
  return {"passed": False, "reason": reason, "latency_ms": {}, "examples": 0,
          "checks": [{"name": "loads", "ok": False, "detail": reason}]}


def record(infra_blessing, result: dict, checked: bool) -> None:
  """The result as the InfraBlessing's files and custom properties."""
  with tf.io.gfile.GFile(os.path.join(infra_blessing.uri, RESULT_FILE), "w") as f:
    f.write(json.dumps(result, indent=1, sort_keys=True))
  passed = checked and result["passed"]
  with tf.io.gfile.GFile(os.path.join(infra_blessing.uri,
                                      BLESSED if passed else NOT_BLESSED), "w") as f:
    f.write("")
  infra_blessing.set_int_custom_property("blessed", int(passed))
  infra_blessing.set_int_custom_property("checked", int(checked))
  infra_blessing.set_string_custom_property("reason", result["reason"])
  for batch, figures in result["latency_ms"].items():
    for stat in ("p50", "p99"):
      infra_blessing.set_float_custom_property(f"{stat}_ms_{batch}", figures[stat])


@component
def ServingCheck(
    model: InputArtifact[standard_artifacts.Model],
    examples: InputArtifact[standard_artifacts.Examples],
    blessing: InputArtifact[standard_artifacts.ModelBlessing],
    contract: Parameter[str],
    example_splits: Parameter[str],
    infra_blessing: OutputArtifact[
        standard_artifacts.InfraBlessing]) -> None:
  """Loads a blessed candidate in a fresh process and checks that it serves."""
  if not blessing.get_int_custom_property("blessed"):
    record(infra_blessing, {"passed": False, "latency_ms": {}, "checks": [],
                            "reason": "not checked: the Evaluator did not bless the model"},
           checked=False)
    logging.info("serving check: skipped, the Evaluator did not bless the model")
    return
  terms = json.loads(contract)
  model_dir = path_utils.serving_model_path(model.uri, path_utils.is_old_model_artifact(model))
  with tempfile.TemporaryDirectory() as tmp:
    requests = os.path.join(tmp, "requests.tfrecord")
    eval_requests(examples, json.loads(example_splits), terms["contract"]["label"], requests)
    result = run_check(model_dir, requests, terms["contract"], terms["budget"])
  record(infra_blessing, result, checked=True)
  logging.info("serving check: %s", check.describe(result))
