"""Tuner: searches the declaration's `tuning:` space, or reuses the latest
search, and hands the best settings to the Trainer.

TFX's own Tuner does not fit: its in-process executor refuses `TuneArgs`
(no parallel trials), its Hyperband path crashes writing results
(tensorflow/tfx#7778), and its `tuner_fn` builds keras-tuner's Keras
tuners, which import Keras 3 where this pipeline trains tf-keras. This one
drives keras-tuner's oracle with the Trainer's own code (components/tuner/), and writes
TFX's artifacts: HyperParameters (`best_hyperparameters.txt`, which TFX's
Trainer reads into `fn_args.hyperparameters`) and TunerResults
(`trials.json`, which the run report shows).

Searching is the exception: a run reuses the latest search recorded in the
serving dir (components/tuner/record.py) unless `tune` asks for a new one, none exists,
the declaration's `tuning:` changed, or `tuning.every` spans have passed.
`search` is the id of the search to use, reused if it exists and run if
not, when the run chose it as it started (pipeline/inputs.py: locally, and
by SpanWindow on Kubeflow), or "" to choose it here.
"""

import json
import os
import time
from typing import Optional

from google.protobuf import json_format
from tfx.dsl.component.experimental.annotations import InputArtifact, OutputArtifact, Parameter
from tfx.dsl.component.experimental.decorators import component
from tfx.dsl.io import fileio
from tfx.proto import trainer_pb2
from tfx.types import artifact_utils, standard_artifacts

from components.tuner import record, space
from components.tuner import search as tuner_search
from components.tuner.trial import TrialData
from dataset import spans
from dataset.declaration import Declaration
from dataset.training import TrainingConfig
from dataset.tuning import Tuning
from runtime.progress import console

# How many trial workers: how a search runs, not what it finds, so it is
# kept out of the step's cache key (an environment variable, not a
# parameter): a run with another count still reuses the search from the
# cache. The local runner sets it from --tune-workers; the compiled Kubeflow
# spec sets it in the Tuner's container.
WORKERS_ENV = "TUNER_WORKERS"
Param = Parameter


def tuner_config(decl: Declaration, training: TrainingConfig, materialized: bool) -> str:
  """The Tuner's `config` parameter: what a search needs, as JSON."""
  return json.dumps({"declaration": decl.contract(), "tuning": decl.tuning.to_dict(),
                     "training": training.to_dict(), "materialized": materialized},
                    sort_keys=True)


def workers() -> int:
  value = os.environ.get(WORKERS_ENV, "1")
  if not value.isdigit() or int(value) < 1:
    raise ValueError(f"{WORKERS_ENV}: expected an integer >= 1, found {value!r}")
  return int(value)


def newest_span(splits) -> Optional[int]:
  """The newest span among split names (`train_span4`), or None without spans."""
  found = [span for span in map(spans.span_of_split, splits) if span is not None]
  return max(found) if found else None


def _patterns(examples, splits):
  return [os.path.join(artifact_utils.get_split_uri([examples], split), "*")
          for split in splits]


@component
def Tuner(
    examples: InputArtifact[standard_artifacts.Examples],
    transform_graph: InputArtifact[
        standard_artifacts.TransformGraph],
    config: Param[str], serving_dir: Param[str], train_args: Param[str],
    eval_args: Param[str], search: Param[str], tune: Param[str],
    best_hyperparameters: OutputArtifact[
        standard_artifacts.HyperParameters],
    tuner_results: OutputArtifact[
        standard_artifacts.TunerResults]) -> None:
  """Reuses or runs a search; writes the best settings and the trials."""
  spec = json.loads(config)
  tuning = Tuning.from_dict(spec["tuning"])
  train = json_format.Parse(train_args, trainer_pb2.TrainArgs()).splits
  span = newest_span(train)
  search, found, why = record.choose(tuning, serving_dir, span, tune, search)
  print(f"Tuner: {why}", flush=True)
  if found is None:
    data = TrialData(_patterns(examples, train),
                     _patterns(examples, json_format.Parse(eval_args,
                                                           trainer_pb2.EvalArgs()).splits),
                     transform_graph.uri, Declaration.from_dict(spec["declaration"]),
                     TrainingConfig.from_dict(spec["training"]), spec["materialized"])
    found = _search(search, tuning, data, workers(), serving_dir, span)
  with fileio.open(os.path.join(found["folder"], record.BEST)) as f:
    best = f.read()
  fileio.makedirs(best_hyperparameters.uri)
  # Alone in its folder: TFX's Trainer reads the folder's only file.
  with fileio.open(os.path.join(best_hyperparameters.uri, record.BEST), "w") as f:
    f.write(best)
  fileio.makedirs(tuner_results.uri)
  with fileio.open(os.path.join(tuner_results.uri, record.TRIALS), "w") as f:
    f.write(json.dumps({**found, "why": why}, sort_keys=True, indent=1))
  for artifact in (best_hyperparameters, tuner_results):
    artifact.set_string_custom_property("search", found["id"])
    artifact.set_string_custom_property("why", why)
    artifact.set_float_custom_property("best_score", found["best_score"])
  # For `python -m commands.debug artifacts` and the Kubeflow UI.
  best_hyperparameters.set_string_custom_property(
      "values", json.dumps(found["best_values"], sort_keys=True))


def _search(search_id: str, tuning: Tuning, data: TrialData, workers: int,
            serving_dir: str, span) -> dict:
  """Runs a search and records it in the serving dir; returns its record."""
  start = time.time()
  # Seeded by the id: a forced new search does not replay the last one's trials.
  trials = tuner_search.search(tuning, data, workers,
                               lambda line: console.say(f"  Tuner: {line}"),
                               seed=int(search_id.rsplit("-", 1)[1], 16) % 2**31,
                               state_dir=record.oracle_dir(serving_dir, search_id))
  if not trials or trials[0]["score"] is None:
    raise RuntimeError(f"Tuner: no trial of {len(trials)} completed; their errors are "
                       "in the log above")
  hp = space.hyperparameters(tuning)
  best = {**hp.get_config(), "values": trials[0]["values"]}
  search = {"id": search_id, "finished_unix": time.time(),
            "finished": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
            "span": span, "objective": tuning.objective, "best_score": trials[0]["score"],
            "best_values": trials[0]["values"], "algorithm": tuning.algorithm,
            "workers": workers, "seconds": round(time.time() - start, 1),
            "tuning": record.searched(tuning), "trials": trials}
  return {**search, "folder": record.save(serving_dir, search, best)}
