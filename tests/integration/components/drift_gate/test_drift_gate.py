"""components/drift_gate/drift_gate.py: the earlier span read from its own
files when no statistics of it are at hand. A span split by hash holds its
eval records too: only its training share is counted, so the dataset size
the gate compares is the earlier training split's, not the whole span's."""

import glob
import os

import pytest
import tensorflow as tf
from google.protobuf import text_format
from tensorflow_metadata.proto.v0 import schema_pb2

from components.drift_gate.drift_gate import previous_statistics
from dataset.convert.rows import write_rows
from tests.conftest import DIGITS_SCHEMA, digit_rows


@pytest.fixture(scope="module")
def span(tmp_path_factory):
  root = tmp_path_factory.mktemp("spans")
  write_rows(digit_rows(40), str(root / "span-1"), "digits")
  schema = text_format.Parse(open(DIGITS_SCHEMA).read(), schema_pb2.Schema())
  files = glob.glob(str(root / "span-1" / "*.gz"))
  assert sum(1 for _ in tf.data.TFRecordDataset(files, "GZIP")) == 40
  return str(root), schema


def _baseline(fraction: float) -> dict:
  return {"previous_split": "", "previous_statistics": "", "train_fraction": fraction,
          "previous_glob": "span-1/*.gz"}


@pytest.mark.parametrize("fraction, counted", [(1.0, 40), (0.75, 30), (2 / 3, 27)])
def test_a_span_split_by_hash_counts_only_its_training_share(span, fraction, counted):
  root, schema = span
  found, source = previous_statistics(_baseline(fraction), None, root, schema)
  assert found.datasets[0].num_examples == counted
  assert source == f"its files ({os.path.join(root, 'span-1/*.gz')})"


def test_without_ml_metadata_the_earlier_spans_statistics_come_from_its_files(tmp_path):
  """A Kubeflow run with a window of one: no earlier statistics in this run,
  no store to read; the gate reads the earlier span's files."""
  import glob
  import os

  import tensorflow as tf
  from google.protobuf import text_format
  from tensorflow_metadata.proto.v0 import schema_pb2

  from components.drift_gate.drift_gate import previous_statistics
  from dataset.convert.digits import write_digits
  from tests.conftest import DIGITS_SCHEMA
  write_digits(str(tmp_path / "span-1"))
  schema = text_format.Parse(open(DIGITS_SCHEMA).read(), schema_pb2.Schema())
  baseline = {"previous_split": "", "previous_statistics": "", "train_fraction": 1.0,
              "previous_glob": "span-1/train/*.tfrecord.gz"}
  found, source = previous_statistics(baseline, None, str(tmp_path), schema)
  files = glob.glob(str(tmp_path / "span-1" / "train" / "*.tfrecord.gz"))
  count = sum(1 for _ in tf.data.TFRecordDataset(files, "GZIP"))
  assert found.datasets[0].num_examples == count, (found.datasets[0].num_examples, count)
  assert source == f"its files ({os.path.join(str(tmp_path), baseline['previous_glob'])})"
  assert {f.path.step[0] for f in found.datasets[0].features} >= {"ink", "shape"}
