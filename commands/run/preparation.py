"""A run's preparation, one for both runners: the declaration with the flags
applied, the configuration, every location checked, and the first records
read against the declaration, before anything runs or is compiled.

- `prepare_local` (local_runner.py) also holds the folder's run lock, writes
  the bundled digits on their first run, resolves the run's inputs once
  (the window, the served version, the training key, the tuning choice:
  pipeline/inputs.py) and chooses Beam's local mode by the data's size.
- `prepare_compiled` (`python -m commands.kubeflow compile`) resolves nothing: each
  Kubeflow run resolves its own inputs in its first step, so the
  configuration holds runtime parameters, and the data root must be one the
  cluster's pods can reach.

Each raises DeclarationError, ConfigError or StorageError for bad input,
one line per problem, with nothing written.
"""

import argparse
import dataclasses
import os
import sys
from typing import Dict, Tuple

from commands.run import flags
from components.tuner.tuner import WORKERS_ENV
from dataset import check
from pipeline.config import ConfigError, PipelineConfig, Resources
from pipeline.inputs import RunInputs, resolve_inputs
from runtime import storage
from store import run_lock


def check_locations(locations: Dict[str, str]) -> None:
  """Every location (its flag or field -> URI) has a scheme TensorFlow opens."""
  for where, uri in locations.items():
    storage.check_scheme(uri, where)


def prepare_local(args: argparse.Namespace,
                  bundled: str) -> Tuple[PipelineConfig, RunInputs, str]:
  """A local run's configuration and inputs, checked; `bundled` is the
  bundled digits' declaration, whose records are written on first use.

  Returns:
    (config, inputs, the pipeline's home folder under --output-dir).

  Raises:
    RunInProgress: another run of the pipeline holds the folder.
  """
  decl = flags.load_declaration(args)
  name = flags.pipeline_name(args, decl)
  home = os.path.join(os.path.abspath(args.output_dir), name)
  run_lock.hold(home, name, args.command)
  config = flags.pipeline_config(
      args, decl, pipeline_root=args.pipeline_root or os.path.join(home, "pipeline_root"),
      serving_dir=args.serving_dir or os.path.join(home, "serving"))
  locations = {"data.root": decl.data.root, "--pipeline-root": config.pipeline_root,
               "--serving-dir": config.serving_dir}
  check_locations(locations)
  storage.check(locations.values())
  if (os.path.abspath(args.dataset) == bundled and not storage.scheme(decl.data.root)
      and not os.path.isdir(decl.data.root)):
    from dataset.convert import digits
    digits.write_digits(decl.data.root)
  inputs = resolve_inputs(config, os.path.join(home, "metadata.sqlite"))
  for note in inputs.window.notes:
    print(f"note: {note}")
  if inputs.tuning_why:
    print(f"note: tuning: {inputs.tuning_why}")
  files = check.data_files(decl, inputs.window)  # listed once, for both
  check.check_records(decl, inputs.window, files=files)
  if args.beam_args is None:
    config = choose_beam_args(config, files, inputs.window)
  # The trial workers' count: how a search runs, not what it finds, so not
  # in the Tuner's cache key (components/tuner/tuner.py reads it).
  os.environ[WORKERS_ENV] = str(config.tune_workers)
  return config, inputs, home


def choose_beam_args(config: PipelineConfig, files, window) -> PipelineConfig:
  """The config with Beam's local mode chosen by the size of the newest
  span's `files` (split -> paths) times the spans in the window
  (runtime/beam.py), said in a note when it is not the default."""
  import tensorflow as tf

  from runtime.beam import local_beam_args
  newest = sum(tf.io.gfile.stat(f).length for paths in files.values() for f in paths)
  input_mb = newest * max(1, len(window.spans)) / 2**20
  beam_args = local_beam_args(input_mb)
  if beam_args:
    print(f"note: {input_mb:.0f} MB of records: Beam runs the data components in "
          f"{beam_args[-1].split('=')[1]} worker processes ({' '.join(beam_args)}; "
          f"--beam-args to choose)")
  return dataclasses.replace(config, beam_args=beam_args)


def prepare_compiled(args: argparse.Namespace,
                     resources: Dict[str, Resources]) -> PipelineConfig:
  """A compiled pipeline's configuration, checked; `resources` are the
  components' container resources.

  Raises:
    ConfigError: the declaration's data root is a folder of this machine
      and --data-root was not given.
  """
  decl = flags.load_declaration(args)
  serving_dir = flags.compiled_serving_dir(args, decl)
  config = flags.pipeline_config(
      args, decl, pipeline_root=args.pipeline_root, serving_dir=serving_dir,
      runtime_parameters=True, resources=resources,
      scheduled_by="a Kubeflow run started outside `python -m commands.kubeflow`")
  if "Trainer" in resources and resources["Trainer"].gpus:
    # The Trainer stops, rather than train on the CPU, if it cannot use them.
    config = dataclasses.replace(config, training=dataclasses.replace(
        config.training, gpus=resources["Trainer"].gpus))
  check_locations({"--pipeline-root": args.pipeline_root, "--serving-dir": serving_dir,
                   ("--data-root" if args.data_root else f"data.root of {args.dataset}"):
                   decl.data.root})
  if not args.data_root and not storage.scheme(decl.data.root):
    raise ConfigError(
        f"data.root of {args.dataset} is {decl.data.root}, a folder of this machine, "
        f"which the cluster's pods cannot read; expected --data-root with a bucket "
        f"URI (gs://, s3://), or a path mounted in the pods given explicitly")
  if args.skip_data_check:
    print(f"skipped: the check of the declaration against the records under "
          f"{decl.data.root} (--skip-data-check)", file=sys.stderr)
  else:
    storage.check([decl.data.root], "--data-root ")
    check.check_records(decl)
  return config
