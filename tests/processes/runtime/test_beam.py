"""Beam on this machine (runtime/beam.py): a distributed runner gets its
arguments untouched (TFX builds its sdist for it, a process)."""


from apache_beam.options.pipeline_options import StandardOptions, StreamingOptions

from components.statistics.statistics import Executor


def test_a_distributed_runner_gets_its_arguments_as_given():
  args = ["--runner=SparkRunner", "--spark_master_url=spark://nowhere:7077"]
  executor = Executor(Executor.Context(beam_pipeline_args=args, tmp_dir="/tmp",
                                       unique_id="1"))
  options = executor._make_beam_pipeline().options
  assert options.view_as(StandardOptions).runner == "SparkRunner"
  given = options.get_all_options(drop_default=True)
  assert given["spark_master_url"] == "spark://nowhere:7077", given
  # Nothing of DirectRunner's: Prism's detour is its alone.
  assert options.view_as(StreamingOptions).update_compatibility_version is None
  assert "direct_running_mode" not in given and "direct_num_workers" not in given, given
