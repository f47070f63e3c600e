"""store/metadata/run_record.py: the one record of a run. Built from a local run's
ML Metadata in tests/e2e (every verdict and report reads it) and from a
Kubeflow run's step records in tests/unit/store/metadata/test_outcome.py; here, what it
makes of the values either runner hands it."""

import json

from ml_metadata.proto import metadata_store_pb2

from dataset import declaration
from store.metadata import run_record
from store.metadata import store as st
from store.metadata.run_record import Found, Node, RunRecord
from tests.conftest import DIGITS_YAML


def test_an_output_a_kubeflow_step_reported_has_its_splits_where_tfx_puts_them():
  found = Found.reported("s3://b/root/Transform/transformed_examples/7",
                         {"split_names": '["train", "eval"]', "blessed": 1.0})
  assert found.splits == {"train": "s3://b/root/Transform/transformed_examples/7/Split-train",
                          "eval": "s3://b/root/Transform/transformed_examples/7/Split-eval"}
  assert Found.reported("s3://b/x", {}).splits == {}


def test_a_flag_is_the_same_from_ml_metadata_and_from_kubeflow():
  """ML Metadata keeps an int, Kubeflow's metadata a float, a string from
  a JSON record; a missing one is false."""
  for value, expected in ((1, True), (0, False), (1.0, True), ("0", False), ("1", True),
                          (None, False)):
    assert Found("u", {"blessed": value}).flag("blessed") is expected, value
  assert Found("u").flag("blessed") is False


def _execution(state, message=None) -> metadata_store_pb2.Execution:
  execution = metadata_store_pb2.Execution(last_known_state=state)
  if message is not None:
    execution.custom_properties["__execution_result__"].string_value = message
  return execution


def test_a_failed_step_says_the_last_line_of_its_error_and_a_complete_one_nothing():
  result = json.dumps({"resultMessage": "Traceback ...\nValueError: feature 'x': bad\n"})
  assert run_record._message(_execution(st.STATE.FAILED, result)) == \
      "ValueError: feature 'x': bad"
  assert run_record._message(_execution(st.STATE.COMPLETE, result)) == ""
  assert run_record._message(_execution(st.STATE.FAILED)) == ""
  assert run_record._message(_execution(st.STATE.FAILED, "not json")) == ""


def test_the_declaration_comes_from_the_transform_or_else_the_trainer_that_ran():
  as_run = declaration.load(DIGITS_YAML).to_dict()
  record = RunRecord("digits", "r1", "2026-11-27 10:00:00",
                     {"Trainer": Node("COMPLETE", 3.0, "7")}, {}, {},
                     {("Trainer", "custom_config"): json.dumps({"declaration": as_run})})
  assert record.declaration().name == "digits"
  assert record.uri("Trainer", "model") is None and record.splits("Trainer", "model") == {}
  record.exec_properties.clear()
  assert record.declaration() is None
