"""Who a worker is, from what its engine gives it: TF_CONFIG.

TFJob (in its `tensorflow` container), Vertex AI and the local engine set
TF_CONFIG themselves. Kubeflow Trainer v2 has no TensorFlow runtime: its
PlainML runtime gives each pod only JOB_COMPLETION_INDEX (an Indexed Job)
and the TrainJob's `trainer.env`, into which the launcher puts the job's
name, its worker count and the port (trainjob.py). JobSet names pod i of
replicated job `node` `<jobset>-node-0-<i>`, with the JobSet (named after
the TrainJob) as its subdomain, so every worker can name every other.

TRAIN_HOST_ALIASES (JSON, host -> "host:port") rewrites addresses after
that, for a cluster whose names do not resolve: the stand-in in
tests/fakes/training_engines.py gives each worker a port on 127.0.0.1 so.
"""

import json
import os
from typing import Dict, Mapping, Optional

JOB_ENV = "TRAIN_JOB_NAME"
WORKERS_ENV = "TRAIN_WORKERS"
PORT_ENV = "TRAIN_PORT"
ALIASES_ENV = "TRAIN_HOST_ALIASES"
DEFAULT_PORT = 2222  # the Training Operator's TensorFlow port


class RoleError(RuntimeError):
  """The environment does not say who this worker is."""


def trainjob_hosts(job: str, workers: int, port: int):
  """The addresses of a TrainJob's workers, as JobSet names its pods."""
  return [f"{job}-node-0-{i}.{job}:{port}" for i in range(workers)]


def tf_config(env: Mapping[str, str]) -> Optional[str]:
  """TF_CONFIG for this worker (aliases applied), or None for one process.

  Raises:
    RoleError: naming the variable that is missing or malformed.
  """
  raw = env.get("TF_CONFIG")
  if not raw and env.get(JOB_ENV):
    index = env.get("JOB_COMPLETION_INDEX", "")
    if not index.isdigit():
      raise RoleError(f"worker of TrainJob {env[JOB_ENV]}: expected JOB_COMPLETION_INDEX "
                      f"(an Indexed Job's pod index), found {index!r}")
    workers = int(env.get(WORKERS_ENV, "0") or 0)
    if not 0 <= int(index) < workers:
      raise RoleError(f"worker of TrainJob {env[JOB_ENV]}: JOB_COMPLETION_INDEX {index} "
                      f"outside the {WORKERS_ENV}={workers} workers")
    raw = json.dumps({
        "cluster": {"worker": trainjob_hosts(env[JOB_ENV], workers,
                                             int(env.get(PORT_ENV) or DEFAULT_PORT))},
        "task": {"type": "worker", "index": int(index)}})
  if not raw:
    return None
  return _aliased(raw, json.loads(env.get(ALIASES_ENV) or "{}"))


def _aliased(raw: str, aliases: Dict[str, str]) -> str:
  if not aliases:
    return raw
  config = json.loads(raw)
  config["cluster"] = {job: [aliases.get(a.rsplit(":", 1)[0], a) for a in addresses]
                       for job, addresses in config.get("cluster", {}).items()}
  return json.dumps(config)


def describe(raw: Optional[str]) -> str:
  """`worker 1 of 2` (or `chief of 3`) for this worker's log."""
  if not raw:
    return "the only worker"
  config = json.loads(raw)
  task = config.get("task", {})
  total = sum(len(v) for k, v in config.get("cluster", {}).items() if k in ("chief", "worker"))
  return f"{task.get('type', 'worker')} {task.get('index', 0)} of {total}"


def apply(env=os.environ) -> Optional[str]:
  """Sets TF_CONFIG from the engine's environment; returns it."""
  raw = tf_config(env)
  if raw:
    env["TF_CONFIG"] = raw
  return raw
