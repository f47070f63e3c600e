"""KServeDeploy: after the Pusher, the serving dir's newest version on KServe.

Off unless the pipeline is built with `--kserve NAME`. It points the
InferenceService NAME, in the step's namespace, at the newest version of
the serving dir (serving/kserve.py): created the first time, then each new
version as a canary at `--kserve-canary-percent` of traffic while the one
served keeps the rest, until `python -m commands.serving kserve promote` or
`rollback --kserve NAME`. It waits (`--kserve-ready-seconds`) until the
new version's revision is Ready and says, from the InferenceService's
status, which version takes the traffic and its share; a revision that
does not get Ready (e.g. the storage initializer's download refused) fails
the step in one line with KServe's reason. The newest version, not this run's push: the
serving dir is the record of what is served, so a rollback's copy (or a
push of another run) is what the InferenceService names too, and a run
that pushed nothing changes nothing. A refusal of the cluster fails the
step in one line naming what to grant or install. What it did is its
output `deployed`, a system.Markdown artifact the run page shows (and an
output of its own makes the launcher create the step's output folder,
which the executor's output file lies under).
"""

import dataclasses
import json
import os

from tfx.dsl.component.experimental.annotations import InputArtifact, OutputArtifact, Parameter
from tfx.dsl.component.experimental.decorators import component
from tfx.types import standard_artifacts

import serving
from components import ui_artifacts
from runtime import storage
from serving import kserve


def target_json(target: kserve.Target) -> str:
  return json.dumps(dataclasses.asdict(target), sort_keys=True)


@component
def KServeDeploy(
    pushed_model: InputArtifact[standard_artifacts.PushedModel],
    serving_dir: Parameter[str],
    target: Parameter[str],
    deployed: OutputArtifact[ui_artifacts.Markdown]) -> None:
  """Points the InferenceService at the serving dir's newest version; says
  what it did on the run page (`deployed`, system.Markdown)."""
  del pushed_model  # after the Pusher; what it pushed is the serving dir's newest
  storage.enable([serving_dir])
  newest = serving.latest(serving_dir)
  if newest is None:
    line = f"kserve: nothing served yet in {serving_dir}; no InferenceService"
  else:
    line = kserve.KServe(kserve.Target(**json.loads(target))).deploy(
        serving_dir, os.path.basename(newest))
  print(line, flush=True)
  deployed.write(line)
