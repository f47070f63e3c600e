"""What each worker of the Trainer's job gets, written into the Trainer step.

With `--train-workers N` (N > 1) the Trainer step launches its workers as a
job (launcher/). Each worker is given what the Trainer step itself would
get, so `--resource Trainer:gpus=1` means one GPU per worker, and the same
for the Trainer's node selectors and tolerations, the image pull secrets,
`--env` and `--secret-env`. The compiler puts that in the Trainer step's
TRAIN_JOB_POD variable (launcher/job.py `pod_spec`): it is not part of the
Trainer's configuration, so where the workers run is not a cache key; how
many there are is (they change the global batch).
"""

import argparse
import dataclasses
import json
from typing import Dict, Optional

from launcher.job import POD_ENV
from pipeline.config import PipelineConfig
from runner import flags

NODE = "Trainer"


def add_flags(parser: argparse.ArgumentParser) -> None:
  parser.add_argument("--train-timeout", type=flags.whole_number(1, unit="a number of seconds"),
                      metavar="SECONDS",
                      help="with --train-workers: delete the Trainer's job and fail the "
                           "step if it has not finished after this long (default: none)")
  parser.add_argument("--train-machine-type", metavar="TYPE",
                      help="--train-engine vertex: each worker's machine (default "
                           "n1-standard-4)")


def worker_pod(config: PipelineConfig, image: str, env: Dict[str, str],
               args: Optional[argparse.Namespace]) -> Dict:
  """TRAIN_JOB_POD's value: the Trainer step's pod settings, per worker."""
  resources = config.resources.get(NODE)
  pod = {"image": image, "env": dict(env),
         "resources": dataclasses.asdict(resources) if resources else {}}
  if args is not None:
    pod.update(
        nodeSelector={k: v for node, k, v in args.node_selector if node == NODE},
        tolerations=[t for node, t in args.toleration if node == NODE],
        imagePullSecrets=list(args.image_pull_secret),
        secretEnv=[list(entry) for entry in args.secret_env])
    if getattr(args, "train_timeout", None):
      pod["timeoutSeconds"] = args.train_timeout
    if getattr(args, "train_machine_type", None):
      pod["machineType"] = args.train_machine_type
  return {k: v for k, v in pod.items() if v not in ({}, [], None, "")}


def step_env(config: PipelineConfig, image: str, env: Dict[str, str],
             args: Optional[argparse.Namespace]) -> Dict[str, str]:
  """The Trainer step's extra environment: {} with one worker."""
  if config.train_workers == 1:
    return {}
  return {POD_ENV: json.dumps(worker_pod(config, image, env, args), sort_keys=True)}
