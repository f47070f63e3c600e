"""The one typed configuration of a pipeline run, validated in one place.

Runners build a `PipelineConfig` (from command-line flags, with the defaults
below); `create_pipeline` takes nothing else. Components receive the parts
they need through `custom_config`, as plain dicts made by `to_dict`.
"""

import dataclasses
from typing import List, Mapping, Optional

from dataset.declaration import Declaration, Evaluation
from dataset.training import ConfigError, TrainingConfig
from dataset.training import check as _check
from runtime import storage
from serving import kserve
from serving.kserve import Target
from trainer.jobs import ENGINES

__all__ = ["ConfigError", "PipelineConfig", "Resources", "TrainingConfig"]


# None: Beam's DirectRunner in this process, in memory, one worker, locally
# and inside each Kubeflow container. Not spelled out as options: any option
# makes TFX build an sdist of itself for Beam's workers, in every data
# component (`dependency_utils.make_beam_dependency_flags`), which
# DirectRunner never uses: 1-2 s a component (bench/e2e_bench.py). A local
# run over large inputs gets worker processes instead
# (runtime/beam.py `local_beam_args`).
DEFAULT_BEAM_ARGS: tuple = ()


@dataclasses.dataclass(frozen=True)
class Resources:
  """What one component's container asks of the cluster (Kubeflow only).

  Attributes:
    cpu: CPU cores, requested and limited to; 0 leaves the cluster default.
    memory_gb: memory in GB, requested and limited to; 0 leaves the default.
    gpus: accelerators (GPUs) attached to the container.
    gpu_type: the accelerator's name: a Kubernetes resource name such as
      `nvidia.com/gpu` on open-source Kubeflow Pipelines, an accelerator type
      such as `NVIDIA_TESLA_T4` on Vertex AI Pipelines.
  """
  cpu: float = 0
  memory_gb: float = 0
  gpus: int = 0
  gpu_type: str = "nvidia.com/gpu"

  def __post_init__(self):
    _check("resources.cpu", self.cpu, self.cpu >= 0, "a number >= 0")
    _check("resources.memory_gb", self.memory_gb, self.memory_gb >= 0,
           "a number >= 0")
    _check("resources.gpus", self.gpus,
           isinstance(self.gpus, int) and self.gpus >= 0, "an integer >= 0")
    _check("resources.gpu_type", self.gpu_type, bool(self.gpu_type),
           "an accelerator name")


@dataclasses.dataclass(frozen=True)
class PipelineConfig:
  """Everything `create_pipeline` needs.

  Attributes:
    pipeline_name: names the pipeline in ML Metadata and on Kubeflow.
    pipeline_root: where component outputs (artifacts) are written.
    serving_dir: where Pusher writes blessed models, one version per folder.
    declaration: the dataset, loaded and checked.
    training: how the Trainer trains.
    threshold: overrides the declaration's `evaluation.threshold`: the
      blessing metric's lower bound (accuracy, auc) or upper bound (rmse, mae).
    max_change: overrides `evaluation.max_change`: once a blessed model
      exists, a new one is blessed only if its metric is at most this much
      worse than the latest blessed model's.
    materialize: Transform writes the transformed examples, which the
      Trainer reads; otherwise (the default: measured faster, see
      `bench/transform_bench.py`) Transform writes only its graph, and the
      Trainer's input pipeline applies it to the examples as they are read.
    enable_cache: reuse a component's earlier outputs when its inputs and
      configuration are unchanged.
    beam_args: Apache Beam pipeline options for the data components.
    resources: component id -> its container's resources on Kubeflow.
    runtime_parameters: make the values that change from run to run (data
      root, train steps, push destination) runtime parameters, with this
      configuration's values as defaults; Kubeflow only, since
      LocalDagRunner needs every value when the pipeline is built.
    tune: non-empty asks the Tuner for a new search (`--tune`; a new token
      each time, so the step is not served from the cache); "" reuses the
      latest search when there is one (components/tuner/tuner.py).
    tune_workers: trial workers of a search (components/tuner/search.py).
    scheduled_by: who or what started the run, for the model card: the
      local runner's user and host; on Kubeflow a runtime parameter that
      `submit` and `schedule` set.
    train_workers: 1 trains in the Trainer's own process; N > 1 has the
      Trainer launch N workers as a job (trainer/jobs/) on `train_engine`.
    train_engine: where those workers run (`trainer.jobs.ENGINES`): `local`
      processes, or on a cluster `trainjob`, `tfjob` or `vertex`.
    kserve: after the Pusher, the InferenceService that serves the newest
      version (components/kserve_deploy/); None: no such step.
  """
  pipeline_name: str
  pipeline_root: str
  serving_dir: str
  declaration: Declaration
  training: TrainingConfig = TrainingConfig()
  threshold: Optional[float] = None
  max_change: Optional[float] = None
  materialize: bool = False
  enable_cache: bool = True
  beam_args: List[str] = dataclasses.field(
      default_factory=lambda: list(DEFAULT_BEAM_ARGS))
  resources: Mapping[str, Resources] = dataclasses.field(default_factory=dict)
  runtime_parameters: bool = False
  tune: str = ""
  tune_workers: int = 1
  scheduled_by: str = ""
  train_workers: int = 1
  train_engine: str = ""
  kserve: Optional[Target] = None

  def __post_init__(self):
    _check("pipeline_name", self.pipeline_name,
           self.pipeline_name.replace("-", "").replace("_", "").isalnum(),
           "letters, digits, '-' and '_'")
    evaluation = self.evaluation
    if evaluation.metric in ("accuracy", "auc"):
      _check("threshold", evaluation.threshold, 0 <= evaluation.threshold <= 1,
             f"a number in [0, 1] ({evaluation.metric})")
    _check("max_change", evaluation.max_change, evaluation.max_change >= 0,
           "a number >= 0")
    _check("tune_workers", self.tune_workers,
           isinstance(self.tune_workers, int) and self.tune_workers >= 1, "an integer >= 1")
    if self.declaration.tuning is None:
      _check("tune (--tune, --tune-workers)",
             f"{self.declaration.path}, which has no tuning: section",
             not self.tune and self.tune_workers == 1,
             "a declaration with a tuning: section to search")
    _check("train_workers (--train-workers)", self.train_workers,
           isinstance(self.train_workers, int) and self.train_workers >= 1,
           "an integer >= 1 (1: train in the Trainer's own process)")
    _check("train_engine (--train-engine)", self.train_engine,
           self.train_engine in ("",) + ENGINES, f"one of {', '.join(ENGINES)}")
    _check("train_engine (--train-engine)", self.train_engine,
           not self.train_engine or self.train_workers > 1,
           "no engine with one worker (set --train-workers 2 or more)")
    _check("train_engine (--train-engine)", self.train_engine or "none",
           self.train_workers == 1 or bool(self.train_engine),
           f"an engine for {self.train_workers} workers ({', '.join(ENGINES)})")
    _check("serving_dir (--serving-dir)", self.serving_dir,
           not self.kserve or storage.scheme(self.serving_dir) in kserve.SCHEMES,
           "a bucket (s3:// or gs://) with --kserve: KServe's storage initializer "
           "downloads the model from there")
    backbones = [f.name for f in self.declaration.of_kind("image") if f.image.backbone]
    _check("training.loop", self.training.loop,
           not backbones or self.training.loop == "fit",
           f"fit with a backbone (features {', '.join(backbones)}: frozen, then "
           f"fine-tuned, is done with fit)")

  @property
  def evaluation(self) -> Evaluation:
    """The declaration's `evaluation:`, with this run's overrides."""
    overrides = {k: v for k, v in (("threshold", self.threshold),
                                   ("max_change", self.max_change)) if v is not None}
    return dataclasses.replace(self.declaration.evaluation, **overrides)

  @property
  def workers(self) -> dict:
    """The Trainer's custom_config entry for its job; {} with one worker,
    so that a one-worker pipeline's cache keys stay what they were."""
    if self.train_workers == 1:
      return {}
    return {"count": self.train_workers, "engine": self.train_engine}
