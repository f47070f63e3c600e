"""Bad input stops a run early, says why, and pushes nothing."""

import os

import pytest

from store.metadata import store as st
from tests.conftest import digit_rows, digits_dataset, digits_raw, write_declaration
from tests.runs import executions_per_node, run_local


@pytest.mark.e2e
def test_schema_anomalies_stop_the_run_before_transform(tmp_path):
  rows = digit_rows(300)
  # The first records are fine, so the up-front declaration check passes;
  # later ones break the curated schema's [0, 1] domain of `ink`.
  for row in rows[100:]:
    row["ink"] = [5.0]
  path = digits_dataset(tmp_path, rows)
  out = tmp_path / "out"
  code, stdout, stderr = run_local("--dataset", path, "--output-dir", str(out))

  assert code == 1
  assert "ExampleValidator found anomalies against the schema" in stderr
  assert "feature 'ink': Out-of-range values" in stderr
  assert "no model pushed" in stderr
  assert "pushed model:" not in stdout
  per_node = executions_per_node(str(out / "digits" / "metadata.sqlite"))
  assert per_node["AnomaliesGate"][0].last_known_state == st.STATE.FAILED
  for node in ("Transform", "Trainer", "Evaluator", "Pusher"):
    assert not per_node.get(node), node
  assert not os.path.exists(out / "digits" / "serving")


def test_declaration_that_does_not_match_the_data_fails_before_anything_is_written(tmp_path):
  rows = digit_rows(10)
  for row in rows:
    row["label"] = [row["label"][0] + 0.5]  # labels that are not integers
  path = digits_dataset(tmp_path, rows)
  out = tmp_path / "out"
  code, stdout, stderr = run_local("--dataset", path, "--output-dir", str(out))
  assert code == 2
  assert "field 'label': expected one integer class id (int64_list), found float_list" \
      in stderr
  assert "digits-00000-of-00001.tfrecord.gz: record 0" in stderr
  assert not out.exists()


def test_invalid_declaration_format_fails_before_anything_is_written(tmp_path):
  raw = digits_raw()
  raw["features"]["image"]["encoding"] = "webp"
  path = write_declaration(tmp_path, raw)
  code, _, stderr = run_local("--dataset", path, "--output-dir", str(tmp_path / "out"))
  assert code == 2
  assert f"{path}: field 'features.image.encoding': expected one of png, jpeg, auto, raw, " \
         "found 'webp'" in stderr
  assert not (tmp_path / "out").exists()


def test_partial_run_with_no_earlier_run_says_so_and_runs_nothing(tmp_path):
  out = tmp_path / "out"
  code, stdout, stderr = run_local("--output-dir", str(out), "--from-node", "Trainer",
                                   "--to-node", "Trainer",
                                   "--data-root", str(tmp_path / "data"))
  assert code == 2, stderr[-3000:]
  assert stderr.strip().splitlines()[-1] == (
      f"error: partial run: expected an earlier successful run under {out / 'digits'} "
      "to reuse the outputs of BaselineModel, CuratedSchema, ImportExampleGen, ImageCheck, "
      "StatisticsGen, ExampleValidator, AnomaliesGate, Transform, found none. Run the whole "
      "pipeline once first."), stderr
  assert stdout == ""
  assert not (out / "digits" / "metadata.sqlite").exists()
