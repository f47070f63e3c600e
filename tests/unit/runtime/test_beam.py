"""Beam on this machine (runtime/beam.py): the data components' pipelines
skip DirectRunner's detour through Prism and still run; a local run
chooses one worker process per core only for inputs large enough to pay
for them."""

import logging
import os

import apache_beam as beam
from apache_beam.options.pipeline_options import StreamingOptions
from apache_beam.testing.util import assert_that, equal_to

from components.statistics.statistics import Executor
from dataset import declaration
from runtime.beam import MULTI_PROCESS_MB, direct_runner, local_beam_args


def test_only_directrunner_counts_as_this_machine():
  assert direct_runner([]) and direct_runner(["--direct_num_workers=1"])
  assert direct_runner(["--runner=DirectRunner"])
  assert not direct_runner(["--runner=DataflowRunner", "--project=p"])
  assert not direct_runner(["--runner", "FlinkRunner"])


def test_a_data_components_pipeline_runs_without_trying_prism(caplog):
  caplog.set_level(logging.INFO)
  with Executor()._make_beam_pipeline() as p:
    assert_that(p | beam.Create([1, 2, 3]) | beam.Map(lambda x: x * 2),
                equal_to([2, 4, 6]))
  said = caplog.text
  assert "PrismRunner" not in said, f"expected no attempt at Prism, found:\n{said}"
  assert p.options.view_as(StreamingOptions).update_compatibility_version == beam.__version__


def test_worker_processes_only_for_large_inputs_on_several_cores():
  assert local_beam_args(MULTI_PROCESS_MB - 1, cores=8) == []
  assert local_beam_args(10_000, cores=1) == []
  assert local_beam_args(MULTI_PROCESS_MB, cores=4) == [
      "--direct_running_mode=multi_processing", "--direct_num_workers=4"]


def test_a_local_run_chooses_by_the_size_of_its_records(tmp_path, capsys):
  import local_runner
  from commands.run import flags, preparation
  from dataset import check, spans
  data = tmp_path / "data"
  data.mkdir()
  with open(data / "part-0.gz", "wb") as f:  # sparse: no disk used
    f.truncate((MULTI_PROCESS_MB + 10) * 2**20)
  decl_path = tmp_path / "big.yaml"
  decl_path.write_text(f"name: big\ndata: {{root: {data}, pattern: '*.gz'}}\n"
                       "label: {name: label, num_classes: 2}\n"
                       "features: {x: {kind: numeric, dtype: float}}\n")
  decl = declaration.load(str(decl_path))
  args = local_runner.parse_args(["--dataset", str(decl_path)])
  config = flags.pipeline_config(args, decl, str(tmp_path / "root"), str(tmp_path / "s"))
  assert config.beam_args == []
  window = spans.resolve(decl.data, decl.path)
  chosen = preparation.choose_beam_args(config, check.data_files(decl, window), window)
  cores = len(os.sched_getaffinity(0))
  if cores >= 2:
    assert chosen.beam_args == ["--direct_running_mode=multi_processing",
                                f"--direct_num_workers={cores}"]
    assert f"{MULTI_PROCESS_MB + 10} MB of records" in capsys.readouterr().out
  else:
    assert chosen.beam_args == []
  given = local_runner.parse_args(["--dataset", str(decl_path), "--beam-args=--direct_num_workers=1"])
  assert given.beam_args is not None  # given arguments are never replaced
