"""Training beyond one process: the Trainer launches its workers as a job.

With `--train-workers N` (N > 1) the Trainer step does not train. It writes
what the workers need under its own output (inputs.py), starts them on an
engine, relays the chief's log and waits (launch.py); each worker learns its
role from what the engine gives it (roles.py) and trains (trainer/worker.py)
under MultiWorkerMirroredStrategy (trainer/distribute.py).

  engine     where the workers run                 who says who is who
  local      N processes on this machine           this package (TF_CONFIG)
  trainjob   Kubeflow Trainer v2 TrainJob          JOB_COMPLETION_INDEX + names
  tfjob      Training Operator v1 TFJob            the operator (TF_CONFIG)
  vertex     Vertex AI CustomJob                   Vertex (TF_CONFIG)

Importing this package loads nothing: the pipeline's configuration reads
ENGINES from it.
"""

ENGINES = ("local", "trainjob", "tfjob", "vertex")
CLUSTER_ENGINES = ENGINES[1:]  # what `python -m commands.kubeflow compile` offers

CONFIG_KEY = "workers"  # in the Trainer's custom_config: {"count", "engine"}
# A worker's heartbeat file, which the cluster engines' liveness probes read
# (tfjob.py); each step touches it (trainer/distribute.py `Heartbeat`).
HEARTBEAT_ENV = "TRAIN_HEARTBEAT"
