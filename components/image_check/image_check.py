"""ImageCheck: the image check (check.py) as a step of the pipeline, after
ImportExampleGen. It always finishes, its findings published (`result`)
and shown as a page (`page`, system.HTML: the Kubeflow run page shows it on
the step); the gate before Transform (components/anomalies_gate/) fails
the run on a kind decided `stop`, so nothing trains on a leak.

Each TFRecord file of each split is one Beam work item (the DirectRunner
here; Dataflow, Flink or Spark spread them over workers): its images are
fingerprinted and written to a file of their own (saved.py), and a
manifest says where. The step's process then reads the fingerprints back
and judges them together (check.judge, linear in the images), and reads
the few records its examples need for their thumbnails (result.py).

On data without an image feature (a table, sequences) the same step runs
the row check (rows.py), as `tfrecords check` does: each row's features
hashed to a digest on Beam, no decoding and no thumbnails, then judged
with the same kinds and decisions (a train row repeated in eval: `leak`).

Spans: a span's files are fingerprinted once. Their fingerprints are kept
under the pipeline root (`image_fingerprints/<pipeline>/<split>/`), named by
the file's content and what the fingerprint depends on, so a later run over
a window holding that span reads them instead of decoding its images
again; retention deletes a span's entries with its analyzer cache
(store/retention/plan.py). Data without spans is fingerprinted each run.
"""

import hashlib
import json
import os
from typing import Dict, List, Tuple

from absl import logging
from tfx import types
from tfx.dsl.components.base import base_beam_component, base_beam_executor, executor_spec
from tfx.proto import trainer_pb2
from tfx.types import artifact_utils, standard_artifacts
from tfx.types.component_spec import ChannelParameter, ComponentSpec, ExecutionParameter

from components import ui_artifacts
from components.image_check import check, rows, saved
from components.image_check import fingerprint as fingerprint_module
from components.image_check.findings import Item
from runtime.beam import NoPrism

# What a fingerprint file depends on besides the TFRecord file's bytes: a
# change here, in the image feature or the label, names new files.
FINGERPRINT_VERSION = 2  # 2: a 32x32 gray thumbnail, for alignment.py
MANIFEST = "manifest"


def fingerprint_key(decl_json: str) -> str:
  """What names a fingerprint file, besides its records: the code that
  computes and writes it, the hashing and decoding libraries' versions,
  the image feature as it is read (raw pixels by their shape and type; an
  encoded image decodes at its own size, whatever size is declared) and
  the label."""
  from dataset.types import Declaration
  decl = Declaration.from_dict(json.loads(decl_json))
  code = hashlib.sha256()
  for module in (fingerprint_module, saved, rows):
    with open(module.__file__, "rb") as f:
      code.update(f.read())
  if not decl.of_kind("image"):  # a row's digest: its features, in order (rows.py)
    return hashlib.sha256(json.dumps(
        [FINGERPRINT_VERSION, code.hexdigest(), "rows", [f.name for f in decl.features],
         decl.label.name]).encode()).hexdigest()[:12]
  import imagehash
  import PIL
  image = check.image_feature(decl)
  read = ([image.image.encoding, image.image.shape, image.image.raw_dtype]
          if image.image.encoding == "raw" else [image.image.encoding])
  return hashlib.sha256(json.dumps(
      [FINGERPRINT_VERSION, code.hexdigest(), imagehash.__version__, PIL.__version__,
       image.name, read, decl.label.name]).encode()).hexdigest()[:12]


def _content_digest(path: str) -> str:
  import tensorflow as tf
  digest = hashlib.sha256()
  with tf.io.gfile.GFile(path, "rb") as f:
    while True:
      block = f.read(1 << 22)
      if not block:
        return digest.hexdigest()[:24]
      digest.update(block)


def fingerprint_file(task: Tuple[str, str, str, bool], decl_json: str, key: str) -> str:
  """One Beam work item: (split, TFRecord file, folder, reusable) -> a
  manifest line naming the file's fingerprints. In a reusable (span) folder
  they are named by `key` (fingerprint_key) and the file's content and kept
  across runs; an existing one is read, not computed."""
  import tensorflow as tf

  from dataset.types import Declaration
  from runtime import storage
  split, path, folder, reusable = task
  storage.enable([path, folder])  # a worker process of its own loads S3 here
  name = f"{key}-{_content_digest(path)}" if reusable else (
      hashlib.sha256(path.encode()).hexdigest()[:24])
  destination = f"{folder}/{name}.jsonl.gz"
  reused = reusable and tf.io.gfile.exists(destination)
  if not reused:
    decl = Declaration.from_dict(json.loads(decl_json))
    saved.write(destination, check.fingerprint_records(path, split, decl, tf.io.gfile.GFile))
  return json.dumps({"split": split, "file": path, "fingerprints": destination,
                     "reused": reused})


def fingerprint_all(pipeline, tasks: List[tuple], decl_json: str, manifest: str) -> List[dict]:
  """Runs `fingerprint_file` over `tasks` on the Beam `pipeline`; the
  manifest's lines, read back."""
  import apache_beam as beam
  import tensorflow as tf
  with pipeline as p:
    _ = (p | "Files" >> beam.Create(tasks) | "Spread" >> beam.Reshuffle()
         | "Fingerprint" >> beam.Map(fingerprint_file, decl_json, fingerprint_key(decl_json))
         | "Manifest" >> beam.io.WriteToText(manifest, file_name_suffix=".jsonl"))
  lines = []
  for shard in sorted(tf.io.gfile.glob(f"{manifest}*.jsonl")):
    with tf.io.gfile.GFile(shard) as f:
      lines += [json.loads(line) for line in f if line.strip()]
  return lines


def read_items(manifest: List[dict]) -> List[Item]:
  """Every image's Item, from the fingerprint files; a reused file's items
  name this run's copy of the records."""
  import dataclasses
  items = []
  for entry in sorted(manifest, key=lambda e: (e["split"], e["file"])):
    items += [dataclasses.replace(item, split=entry["split"], file=entry["file"])
              for item in saved.read(entry["fingerprints"])]
  return items


def _tasks(examples, splits: List[str], cache_dir: str, scratch: str) -> List[tuple]:
  import tensorflow as tf

  from dataset import spans
  tasks = []
  for split in splits:
    folder = artifact_utils.get_split_uri([examples], split)
    reusable = bool(cache_dir) and spans.is_span_split(split)
    target = f"{cache_dir}/{split}" if reusable else f"{scratch}/{split}"
    tasks += [(split, path, target, reusable)
              for path in sorted(tf.io.gfile.glob(os.path.join(folder, "*")))]
  return tasks


def _remove(folder: str) -> None:
  import tensorflow as tf
  if tf.io.gfile.exists(folder):
    tf.io.gfile.rmtree(folder)


class Executor(NoPrism, base_beam_executor.BaseBeamExecutor):
  """Fingerprints on Beam, judges here, publishes the findings."""

  def Do(self, input_dict: Dict[str, List[types.Artifact]],
         output_dict: Dict[str, List[types.Artifact]], exec_properties: Dict) -> None:
    from google.protobuf import json_format

    from components.image_check import page
    from components.image_check import result as check_result
    from dataset.types import Declaration
    examples = artifact_utils.get_single_instance(input_dict["examples"])
    decl_json = exec_properties["declaration"]
    decl = Declaration.from_dict(json.loads(decl_json))
    trains = list(json_format.Parse(exec_properties["train_args"], trainer_pb2.TrainArgs()).splits)
    evals = json.loads(exec_properties["eval_splits"])
    out = artifact_utils.get_single_instance(output_dict["result"])
    scratch = f"{os.path.dirname(out.uri)}/fingerprints"
    _remove(scratch)  # a retried attempt's: its manifest would count images twice
    tasks = _tasks(examples, list(dict.fromkeys(trains + evals)),
                   exec_properties.get("cache_dir") or "", scratch)
    manifest = fingerprint_all(self._make_beam_pipeline(), tasks, decl_json,
                               f"{scratch}/{MANIFEST}")
    items = read_items(manifest)
    _remove(scratch)  # read: the result holds what the report needs
    found = check.judge(items, decl, trains, evals)
    result = check_result.as_dict(found, items, decl, manifest)
    out.value = json.dumps(result, sort_keys=True)
    for shown in output_dict.get("page", []):
      shown.value = page.page(result)
    logging.info("image check: %s", check_result.describe(result))
    for line in check_result.lines(result):  # one per kind found
      print(line, flush=True)


class ImageCheckSpec(ComponentSpec):
  PARAMETERS = {"declaration": ExecutionParameter(type=str),
                "train_args": ExecutionParameter(type=str),
                "eval_splits": ExecutionParameter(type=str),
                "cache_dir": ExecutionParameter(type=str, optional=True),
                "code": ExecutionParameter(type=str, optional=True)}
  INPUTS = {"examples": ChannelParameter(type=standard_artifacts.Examples)}
  OUTPUTS = {"result": ChannelParameter(type=standard_artifacts.String),
             "page": ChannelParameter(type=ui_artifacts.HTML)}


class ImageCheck(base_beam_component.BaseBeamComponent):
  """The image check over ImportExampleGen's output; on data without an
  image feature (a table, sequences), the row check (rows.py).

  Args:
    examples: ImportExampleGen's output.
    declaration: the declaration as JSON (its image feature, or its
      features for the row check; its label and `image_checks:` decisions).
    train_args: the Trainer's TrainArgs as JSON (its splits are the train
      splits): a constant, or the span window's parameter.
    eval_splits: the eval splits, a JSON list (the Evaluator's).
    cache_dir: where spans' fingerprints are kept ("" keeps none).
    code: a hash of the check's code (pipeline/cache_keys.py): TFX's cache
      key names the executor by its import path only, so an edited
      threshold would otherwise be served the earlier findings.
  """
  SPEC_CLASS = ImageCheckSpec
  EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(Executor)

  def __init__(self, examples, declaration: str, train_args, eval_splits, cache_dir: str = "",
               code: str = ""):
    from tfx.types import channel
    super().__init__(spec=ImageCheckSpec(
        examples=examples, declaration=declaration, train_args=train_args,
        eval_splits=eval_splits, cache_dir=cache_dir, code=code,
        result=channel.Channel(type=standard_artifacts.String),
        page=channel.Channel(type=ui_artifacts.HTML)))
