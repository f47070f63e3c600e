"""Beam on this machine, without Beam's detour through Prism.

Given no --runner, Beam 2.74's DirectRunner first tries each pipeline on
Prism, a runner binary it downloads from GitHub; where that cannot work it
falls back to its in-process FnApiRunner, about 1.7 s later, in every Beam
component of every run (SwitchingDirectRunner in
apache_beam/runners/direct/direct_runner.py; three components here: a
fifth of this pipeline's fixed cost, bench/e2e_bench.py). DirectRunner does
not try Prism for a pipeline that sets `update_compatibility_version`. Set
to the running Beam's own version, that option changes nothing else: no
transform is "prior to" the version that runs it
(`PipelineOptions.is_compat_version_prior_to`).

It is set here, in the pipeline each executor makes, and not as a Beam
argument of the pipeline: any Beam argument makes TFX build an sdist of
itself in every data component for remote workers
(`dependency_utils.make_beam_dependency_flags`), which DirectRunner never
uses. A distributed runner (Dataflow, Flink, Spark) gets the arguments as
given.

How many processes: a local run that was given no --beam-args chooses by
the size of its input (`local_beam_args`). Beam's multi_processing mode
starts one worker process per core, each importing TFX and TensorFlow
again: on 2 cores, T at 200k rows (27 MB) ran 10% slower that way, and at
1M rows (133 MB) 23% faster (193 s against 149 s), so the two cross near
50 MB.
"""

import os
from typing import List, Optional

MULTI_PROCESS_MB = 50


def direct_runner(beam_args: Optional[List[str]]) -> bool:
  """True when Beam runs on this machine (DirectRunner, the default)."""
  from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
  runner = PipelineOptions(list(beam_args or [])).view_as(StandardOptions).runner
  return runner in (None, "DirectRunner", "direct")


class NoPrism:
  """Mixin for a TFX Beam executor: its pipelines skip Prism on DirectRunner."""

  def _make_beam_pipeline(self):
    if getattr(self, "_make_beam_pipeline_fn", None) or not direct_runner(
        self._beam_pipeline_args):
      return super()._make_beam_pipeline()
    import apache_beam as beam
    return beam.Pipeline(argv=list(self._beam_pipeline_args) + [
        f"--update_compatibility_version={beam.__version__}"])


def local_beam_args(input_mb: float, cores: Optional[int] = None) -> List[str]:
  """The Beam arguments for a local run over `input_mb` MB of records:
  none (in memory, one worker) below MULTI_PROCESS_MB or on one core, one
  worker process per core above."""
  cores = cores or len(os.sched_getaffinity(0))
  if cores < 2 or input_mb < MULTI_PROCESS_MB:
    return []
  return ["--direct_running_mode=multi_processing", f"--direct_num_workers={cores}"]
