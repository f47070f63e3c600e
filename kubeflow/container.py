"""The command every compiled step runs in its container.

TFX's KFP v2 executor runner, started after the project's Keras choice:
TFX's own entrypoint imports TFMA, which loads Keras, before any project
code would run, so without this the container would train under Keras 3.
"""

import components  # noqa: F401  (the Keras choice, before TF loads Keras)

# isort: split
from absl import app
from tfx.orchestration.kubeflow.v2.container import kubeflow_v2_run_executor

COMMAND = ["python", "-m", "kubeflow.container"]

if __name__ == "__main__":
  app.run(kubeflow_v2_run_executor.main,
          flags_parser=kubeflow_v2_run_executor._parse_flags)
