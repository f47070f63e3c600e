"""commands/run/execute.py: a component that fails ends the run's output with
an `error:` line naming it, after its traceback (a one-component pipeline
run by LocalDagRunner here; the whole runs are in tests/e2e/)."""

from tfx.dsl.component.experimental.decorators import component
from tfx.orchestration import metadata
from tfx.orchestration import pipeline as tfx_pipeline

from commands.run import execute

WHY = ("Got non-flat/non-unique argument names for SavedModel signature "
       "'serving_default': more than one argument was named 'mean radius'")


@component
def Trainer() -> None:  # noqa: N802  (named as the step whose failure the issue met)
  raise ValueError(f"{WHY}\nthe rest of a long message")


def test_a_failed_step_ends_with_one_error_line_naming_the_step(tmp_path, capsys):
  store = str(tmp_path / "metadata.sqlite")
  pipeline = tfx_pipeline.Pipeline(
      pipeline_name="wine", pipeline_root=str(tmp_path / "root"), components=[Trainer()],
      metadata_connection_config=metadata.sqlite_metadata_connection_config(store))
  assert execute.execute(pipeline, None, store) == 1
  err = capsys.readouterr().err.rstrip().splitlines()
  assert "Traceback (most recent call last):" in err, err
  assert err[-2:] == [f"error: Trainer failed: ValueError: {WHY}", "no model pushed"], err[-5:]
