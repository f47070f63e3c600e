"""The flags both runners share, defined once, and the config built from them.

`local_runner.py` and `python -m commands.kubeflow compile` both call
`add_pipeline_flags`, so a flag means the same thing on both and has one
default. Each runner adds only what is its own (local: --output-dir and
partial runs; Kubeflow: --image, --pipeline-root, resources).
"""

import argparse
import dataclasses
import os
import shlex
import socket
import time
from typing import Any, Callable, Optional, Sequence, Tuple

from dataset import declaration
from dataset.training import ConfigError
from pipeline.config import DEFAULT_BEAM_ARGS, PipelineConfig, TrainingConfig
from runtime import process
from serving import kserve


def whole_number(low: int, high: Optional[int] = None,
                 unit: str = "a whole number") -> Callable[[str], int]:
  """An argparse type: an integer from `low` (to `high`). argparse puts the
  flag's name before the message, so the message does not repeat it."""
  expected = f"{unit} from {low} to {high}" if high is not None else f"{unit} >= {low}"

  def parse(text: str) -> int:
    try:
      value = int(text)
    except ValueError:
      value = None
    if value is None or value < low or (high is not None and value > high):
      raise argparse.ArgumentTypeError(f"expected {expected}, found {text!r}")
    return value
  return parse


# argparse type of --keep and --keep-runs.
keep_count = whole_number(1)


def add_home_flags(parser: argparse.ArgumentParser, default_output_dir: str,
                   default_pipeline: Optional[str] = "digits") -> None:
  """Where a local pipeline's runs are, for the commands that read them
  (`python -m commands.debug`, `python -m commands.retention`); a
  `default_pipeline` of None: the command finds the one there."""
  parser.add_argument("--pipeline", default=default_pipeline,
                      help="the pipeline's name (default: " + (
                          default_pipeline or "the only one under --output-dir, or in "
                          "--metadata") + ")")
  parser.add_argument("--output-dir", default=default_output_dir,
                      help="local_runner.py's --output-dir (default: runs/)")
  parser.add_argument("--metadata", help="the metadata file itself (default: "
                      "<output-dir>/<pipeline>/metadata.sqlite)")


def add_pipeline_flags(parser: argparse.ArgumentParser, default_dataset: str) -> None:
  """Adds the flags that configure the pipeline itself."""
  parser.add_argument("--dataset", default=default_dataset,
                      help="the dataset declaration (YAML); default: the "
                           "bundled digits")
  parser.add_argument("--data-root",
                      help="read the records from here (a folder or a URI "
                           "such as gs://bucket/data) instead of the "
                           "declaration's data.root")
  parser.add_argument("--pipeline-name",
                      help="default: the declaration's name")
  parser.add_argument("--train-steps", dest="train", action=_TrainSteps, type=int,
                      default=argparse.SUPPRESS,
                      metavar="N", help="shorthand for --train train_steps=N (default "
                                        f"{TrainingConfig.train_steps}); the later one wins")
  parser.add_argument("--threshold", "--min-accuracy", dest="threshold", type=float,
                      help="bless a model only if its blessing metric (the "
                           "declaration's evaluation.metric, default accuracy) "
                           "is at least this (accuracy, auc) or at most this "
                           "(rmse, mae); default: the declaration's, else 0.9")
  parser.add_argument("--max-change", "--max-accuracy-drop", dest="max_change",
                      type=float,
                      help="once a model is served, bless a new one only if its "
                           "metric is at most this much worse than the served "
                           "one's; default: the declaration's, else 0.01")
  parser.add_argument("--beam-args",
                      help="Apache Beam options for the data components, as "
                           "one string; write --beam-args=\"...\" (default: "
                           "DirectRunner, in memory; a local run over 50 MB or "
                           "more of records on 2+ cores: one worker process "
                           "per core)")
  parser.add_argument("--train", action="append", default=[], metavar="FIELD=VALUE",
                      type=training_setting,
                      help="a training setting (repeatable), e.g. loop=custom, "
                           "batch_size=128, flip_left_right=true: any field of "
                           "dataset/training.py's TrainingConfig")
  parser.add_argument("--materialize", action=argparse.BooleanOptionalAction,
                      default=PipelineConfig.materialize,
                      help="Transform writes transformed examples for the "
                           "Trainer (--materialize), or only its graph, which "
                           "the Trainer's input pipeline applies "
                           "(--no-materialize)")
  parser.add_argument("--tune", action="store_true",
                      help="with tuning: in the declaration, run a new "
                           "hyperparameter search instead of reusing the "
                           "latest one (Kubeflow: the runtime parameter tune)")
  parser.add_argument("--tune-workers", type=int, default=PipelineConfig.tune_workers,
                      metavar="N", help="trial workers of a search, beside one "
                                        "oracle on 127.0.0.1 (default 1)")
  parser.add_argument("--train-workers", type=int, default=PipelineConfig.train_workers,
                      metavar="N", help="train with N workers under "
                                        "MultiWorkerMirroredStrategy, launched as a job "
                                        "(locally: N processes; default 1: the Trainer "
                                        "trains in its own process)")
  parser.add_argument("--no-cache", action="store_true",
                      help="re-run every component even if its inputs are "
                           "unchanged")
  kserve_flags(parser)


def kserve_flags(parser: argparse.ArgumentParser) -> None:
  """The KServeDeploy step's flags (components/kserve_deploy/)."""
  parser.add_argument("--kserve", metavar="NAME", help="after the Pusher, point the "
                      "InferenceService NAME (KServe v0.15 to v0.20) at the newest version; "
                      "default: no such step")
  parser.add_argument("--kserve-canary-percent", type=whole_number(0, 99), default=0,
                      metavar="P", help="a new version's share of traffic while the "
                      "served one keeps the rest (Knative mode; default 0: outright)")
  parser.add_argument("--kserve-mode", choices=sorted(kserve.MODES), default="knative",
                      help="KServe's deployment mode (default: %(default)s)")
  parser.add_argument("--kserve-service-account", default="", metavar="NAME",
                      help="the predictor's service account, carrying the S3 Secret")
  parser.add_argument("--kserve-ready-seconds", type=whole_number(1, 86400),
                      default=kserve.Target.ready_seconds, metavar="S", help="how long "
                      "KServeDeploy waits for the new version to be Ready (default: %(default)s)")


class _TrainSteps(argparse.Action):
  """`--train-steps N` is `--train train_steps=N`, in command-line order.
  (A flag of its own with a default used to override `--train
  train_steps=...` silently.)"""

  def __call__(self, parser, namespace, values, option_string=None):
    namespace.train = [*namespace.train, ("train_steps", values)]


def load_declaration(args: argparse.Namespace) -> declaration.Declaration:
  """The declaration named by --dataset, with --data-root applied.

  Raises:
    DeclarationError: naming the file and the field.
  """
  decl = declaration.load(args.dataset)
  if args.data_root:
    root = declaration.resolve(os.getcwd(), args.data_root)
    decl = dataclasses.replace(decl, data=dataclasses.replace(decl.data, root=root))
  return decl


def pipeline_config(args: argparse.Namespace, decl: declaration.Declaration,
                    pipeline_root: str, serving_dir: str,
                    **overrides) -> PipelineConfig:
  """The PipelineConfig of these flags.

  Raises:
    ConfigError: naming the field, what was expected and what was found.
  """
  if "scheduled_by" not in overrides:  # a compiled pipeline's is a runtime parameter
    overrides["scheduled_by"] = f"local_runner.py, by {process.who()} on {socket.gethostname()}"
  return PipelineConfig(
      pipeline_name=pipeline_name(args, decl),
      pipeline_root=pipeline_root, serving_dir=serving_dir, declaration=decl,
      training=training_config(args.train),
      materialize=args.materialize,
      threshold=args.threshold, max_change=args.max_change,
      enable_cache=not args.no_cache,
      # A new token for each --tune, so the Tuner is never a cache hit.
      tune=f"asked {time.time():.0f}" if args.tune else "",
      tune_workers=args.tune_workers,
      train_workers=args.train_workers,
      # Locally the workers are this machine's processes; compile names a cluster's.
      train_engine=((args.train_engine or "") if hasattr(args, "train_engine")
                    else "local" if args.train_workers > 1 else ""),
      beam_args=(list(DEFAULT_BEAM_ARGS) if args.beam_args is None
                 else shlex.split(args.beam_args)),
      kserve=kserve_target(args),
      **overrides)


def kserve_target(args: argparse.Namespace) -> Optional[kserve.Target]:
  """The --kserve flags' InferenceService, or None."""
  if not args.kserve:
    for flag in ("kserve_canary_percent", "kserve_service_account"):
      if getattr(args, flag):
        raise ConfigError(f"--{flag.replace('_', '-')}: only with --kserve NAME")
    return None
  try:
    return kserve.Target(args.kserve, args.kserve_mode, args.kserve_canary_percent,
                         args.kserve_service_account,
                         ready_seconds=args.kserve_ready_seconds)
  except ValueError as e:
    raise ConfigError(str(e)) from None


def training_setting(text: str) -> Tuple[str, Any]:
  """argparse type of `--train FIELD=VALUE`: (field, value of the field's
  type). The settings are typed here, at the command line, once; from here
  on they travel as a TrainingConfig (dataset/training.py)."""
  fields = {f.name: f.type for f in dataclasses.fields(TrainingConfig)}
  name, sep, value = text.partition("=")
  if not sep or name not in fields:
    raise argparse.ArgumentTypeError(f"{text!r}: expected FIELD=VALUE with FIELD one "
                                     f"of {', '.join(fields)}")
  try:
    return name, _typed(fields[name], value)
  except ValueError:
    raise argparse.ArgumentTypeError(f"{text!r}: expected a {fields[name].__name__} "
                                     f"value, found {value!r}") from None


def training_config(settings: Sequence[Tuple[str, Any]]) -> TrainingConfig:
  """The TrainingConfig of typed (field, value) settings over the defaults;
  the last setting of a field wins.

  Raises:
    ConfigError: a value TrainingConfig refuses, named.
  """
  values = dict(settings)
  if "train_steps" in values and "epochs" not in values:
    # TrainingConfig's own rule: fewer steps than epochs, one step per epoch.
    steps = values.pop("train_steps")
    return TrainingConfig(**values).with_train_steps(steps)
  return TrainingConfig(**values)


def _typed(kind, value: str):
  if kind is bool:
    if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
      raise ValueError(value)
    return value.lower() in ("true", "1", "yes")
  return kind(value)


def pipeline_name(args: argparse.Namespace, decl: declaration.Declaration) -> str:
  return args.pipeline_name or decl.name


def compiled_serving_dir(args: argparse.Namespace, decl: declaration.Declaration) -> str:
  """A compiled pipeline's serving dir: --serving-dir, else under its root."""
  return args.serving_dir or f"{args.pipeline_root.rstrip('/')}/{pipeline_name(args, decl)}/serving"
