"""Transform, with its analyzer cache kept across spans.

tf.Transform can reuse the analysis (means, vocabularies) of data it has
analysed before, keyed by dataset. TFX keys a dataset by its artifact's URI,
which is new in every run, and hands the cache from run to run through a
resolver, which Kubeflow Pipelines v2 cannot run. This executor instead:

- keys each span's training split by its name (`train_span4`, see
  dataset/spans.py): spans are immutable, so the name is the content;
- reads and writes the cache in one folder per pipeline (custom_config's
  `analyzer_cache`, under the pipeline root), like the serving directory
  that holds the baseline: the same on LocalDagRunner and on Kubeflow.

So a window of spans 3-5 that follows one of 2-4 analyses span 5 only. Each
span's cache folder is replaced whole, by a rename, so a run that dies half
way never leaves a half-written entry for the next one to read. Data
without spans has nothing to share across runs: its Transform runs with the
cache disabled, which also lets tf.Transform analyse in one joint pass
(a fifth of Transform's time on T; bench/e2e_bench.py).
"""

import json
import os
import uuid

from absl import logging
from tensorflow_transform.beam import analyzer_cache
from tfx.components.transform import executor
from tfx.components.transform.component import Transform as TfxTransform
from tfx.dsl.components.base import executor_spec
from tfx.dsl.io import fileio
from tfx.types import artifact_utils, standard_artifacts, standard_component_specs
from tfx.utils import io_utils

from dataset import spans
from runtime.beam import NoPrism

CACHE_CONFIG_KEY = "analyzer_cache"


def span_key(file_pattern: str):
  """The cache key of a span's split (`<uri>/Split-train_span4/*`), or None
  for data without spans."""
  split = spans.split_of(file_pattern)
  return analyzer_cache.DatasetKey(split) if spans.is_span_split(split) else None


def _listing(folder: str) -> dict:
  return {name: fileio.stat(os.path.join(folder, name)).length
          for name in fileio.listdir(folder)}


def publish(updated: str, shared: str) -> list:
  """Moves new or grown per-dataset cache folders from a run's output into
  the shared folder; returns the keys published.

  A preprocessing_fn without analyzers caches nothing: on an object store
  its output folder then holds no object, so it does not exist at all.
  """
  published = []
  if not fileio.isdir(updated):
    return published
  fileio.makedirs(shared)
  for key in sorted(k.rstrip("/") for k in fileio.listdir(updated)):
    source, target = os.path.join(updated, key), os.path.join(shared, key)
    if not fileio.isdir(source) or key.startswith("uncached_"):
      continue
    if fileio.isdir(target) and _listing(target) == _listing(source):
      continue
    temporary = os.path.join(shared, f".tmp-{key}-{uuid.uuid4().hex}")
    io_utils.copy_dir(source, temporary)
    if fileio.isdir(target):
      old = os.path.join(shared, f".old-{key}-{uuid.uuid4().hex}")
      fileio.rename(target, old)
      fileio.rename(temporary, target)
      fileio.rmtree(old)
    else:
      fileio.rename(temporary, target)
    published.append(key)
  return published


class SpanKeyedProcessor(executor.TransformProcessor):
  """TFX's TransformProcessor, keying each span's split by its name."""

  def _MakeDatasetList(self, *args, **kwargs):
    datasets = super()._MakeDatasetList(*args, **kwargs)
    for dataset in datasets:
      key = span_key(dataset.file_pattern)
      if key is not None:
        dataset.dataset_key = key
    datasets.sort(key=lambda d: d.dataset_key)
    for index, dataset in enumerate(datasets):
      dataset.index = index
    return datasets


class Executor(NoPrism, executor.Executor):
  """TFX's Transform executor, with span keys and a shared cache folder."""

  def Do(self, input_dict, output_dict, exec_properties):
    config = json.loads(exec_properties.get(
        standard_component_specs.CUSTOM_CONFIG_KEY) or "{}")
    # With the cache disabled (data without spans: pipeline/pipeline.py)
    # there is no output cache, and no input cache is read either.
    caching = standard_component_specs.UPDATED_ANALYZER_CACHE_KEY in output_dict
    shared = config.get(CACHE_CONFIG_KEY) if caching else None
    if shared and fileio.isdir(shared) and not input_dict.get(
        standard_component_specs.ANALYZER_CACHE_KEY):
      cache = standard_artifacts.TransformCache()
      cache.uri = shared
      input_dict = {**input_dict, standard_component_specs.ANALYZER_CACHE_KEY: [cache]}
    # TFX's Do builds its processor by this module-level name, with no hook
    # to pass another; swapped for this call only.
    original, executor.TransformProcessor = executor.TransformProcessor, SpanKeyedProcessor
    try:
      super().Do(input_dict, output_dict, exec_properties)
    finally:
      executor.TransformProcessor = original
    updated = output_dict.get(standard_component_specs.UPDATED_ANALYZER_CACHE_KEY)
    if shared and updated:
      published = publish(artifact_utils.get_single_uri(updated), shared)
      logging.info("Analyzer cache %s: new or updated entries %s", shared, published)


class Transform(TfxTransform):
  """TFX's Transform, running the executor above."""
  EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(Executor)

