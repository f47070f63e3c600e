"""commands/run/preparation.py: a local run's preparation chooses Beam's
local mode by the size of its records, unless the user chose with
`--beam-args`."""

import os

import pytest

import local_runner
from commands.run import preparation
from components.tuner.tuner import WORKERS_ENV
from runtime.beam import MULTI_PROCESS_MB
from store import run_lock


@pytest.fixture
def big_data(tmp_path, monkeypatch):
  """A declaration over records above MULTI_PROCESS_MB, on four cores."""
  data = tmp_path / "data"
  data.mkdir()
  with open(data / "part-0.gz", "wb") as f:  # sparse: no disk used
    f.truncate((MULTI_PROCESS_MB + 10) * 2**20)
  decl = tmp_path / "big.yaml"
  decl.write_text(f"name: big\ndata: {{root: {data}, pattern: '*.gz'}}\n"
                  "label: {name: label, num_classes: 2}\n"
                  "features: {x: {kind: numeric, dtype: float}}\n")
  # The records are zeros: what they hold is dataset/check.py's to test.
  monkeypatch.setattr(preparation.check, "check_records", lambda *a, **k: None)
  monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
  monkeypatch.setenv(WORKERS_ENV, "1")  # prepare_local sets it; restored after
  yield str(decl), str(tmp_path / "out")
  run_lock.release()


def _prepare(argv):
  args = local_runner.parse_args(argv)
  args.command = " ".join(["local_runner.py", *argv])  # as local_runner.main sets it
  return preparation.prepare_local(args, bundled="/not/the/bundled/digits.yaml")[0]


def test_large_records_get_a_worker_process_per_core(big_data, capsys):
  decl, out = big_data
  config = _prepare(["--dataset", decl, "--output-dir", out])
  assert config.beam_args == ["--direct_running_mode=multi_processing",
                              "--direct_num_workers=4"]
  assert f"note: {MULTI_PROCESS_MB + 10} MB of records: Beam runs the data components in 4 " \
         "worker processes" in capsys.readouterr().out


def test_the_users_beam_args_are_kept_whatever_the_size(big_data, capsys):
  decl, out = big_data
  config = _prepare(["--dataset", decl, "--output-dir", out,
                     "--beam-args=--direct_num_workers=1 --direct_running_mode=in_memory"])
  assert config.beam_args == ["--direct_num_workers=1", "--direct_running_mode=in_memory"]
  assert "MB of records" not in capsys.readouterr().out
