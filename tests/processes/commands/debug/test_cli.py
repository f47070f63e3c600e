"""`python -m commands.debug` on bad metadata, each a process of its own.

The commands on real runs are tested in tests/e2e/test_e2e.py, on the digits run.
"""


import ml_metadata as mlmd
from ml_metadata.proto import metadata_store_pb2

from tests.runs import debug_cli


def test_a_missing_metadata_file_is_an_error_that_names_it(tmp_path):
  missing = tmp_path / "nowhere" / "metadata.sqlite"
  code, out, err = debug_cli("runs", "--metadata", str(missing))
  assert code == 2 and out == ""
  assert err.strip() == (f"error: {missing}: no such file; expected the ML Metadata store "
                         "that local_runner.py writes to <output-dir>/<pipeline>/"
                         "metadata.sqlite (run the pipeline first, or name the file with "
                         "--metadata)"), err


def test_a_file_that_is_not_ml_metadata_is_an_error(tmp_path):
  bogus = tmp_path / "metadata.sqlite"
  bogus.write_text("not a database")
  code, out, err = debug_cli("artifacts", "--metadata", str(bogus))
  assert code == 2 and out == ""
  assert err.startswith(f"error: {bogus}: expected an ML Metadata SQLite store, found a "
                        "file it cannot read"), err


def test_another_pipelines_metadata_is_an_error_not_an_empty_listing(tmp_path):
  path = str(tmp_path / "metadata.sqlite")
  config = metadata_store_pb2.ConnectionConfig()
  config.sqlite.filename_uri = path
  config.sqlite.connection_mode = metadata_store_pb2.SqliteMetadataSourceConfig.READWRITE_OPENCREATE
  store = mlmd.MetadataStore(config)
  type_id = store.put_context_type(metadata_store_pb2.ContextType(name="pipeline"))
  store.put_contexts([metadata_store_pb2.Context(type_id=type_id, name="penguin")])
  del store
  for command in ("runs", "lineage", "report"):
    code, out, err = debug_cli(command, "--metadata", path, "--pipeline", "digits")
    assert code == 2 and out == "", (command, out)
    assert err.strip() == (f"error: {path}: expected the runs of pipeline 'digits', "
                           "found 'penguin'"), err
  code, out, err = debug_cli("runs", "--metadata", path, "--pipeline", "penguin")
  assert code == 0 and out.strip() == "pipeline 'penguin' has no runs recorded yet", err


LISTING = """
import json, sys
from runtime import startup
startup.start()
from commands.debug.cli import main
code = main(["runs", "--metadata", sys.argv[1]])
print(json.dumps([code, sorted({m.split(".")[0] for m in sys.modules}
                               & {"tensorflow", "tfx", "apache_beam"})]))
"""


def test_runs_says_what_each_run_did_without_loading_tensorflow(tmp_path):
  """`runs` reads each run's record and Outcome: the outputs' properties,
  never their files or TFX's split rules (a second, not ten)."""
  import json
  import subprocess
  import sys

  from tests.conftest import REPO
  from tests.metadata_runs import Runs, serving_check_failed
  runs = Runs(tmp_path)
  runs.run("run-0", ("StatisticsGen", "COMPLETE", {"statistics": (
      "ExampleStatistics", {"span": 0, "split_names": '["train", "eval"]'})}))
  serving_check_failed(runs, "run-1")
  proc = subprocess.run([sys.executable, "-c", LISTING, runs.path], cwd=REPO,
                        capture_output=True, text=True, timeout=600)
  *listing, last = proc.stdout.strip().splitlines()
  assert json.loads(last) == [0, []], proc.stdout + proc.stderr[-3000:]
  assert listing[-5].endswith("  not pushed: serving check failed"), listing
