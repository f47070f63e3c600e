"""Each label kind: class ids, class names (strings), and regression.

The declaration, the record check, the real preprocessing_fn through
tft_beam, the model builder, and what the serving signature returns."""

import copy

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform as tft

from dataset import check, declaration, schema
from dataset.convert.rows import serialize
from dataset.training import TrainingConfig
from tests.conftest import digit_rows, digits_raw, write_declaration
from trainer import export, input_pipeline, model, run

NAMES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
CONFIG = TrainingConfig(batch_size=16)


def raw_with(label: dict, evaluation: dict = None) -> dict:
  raw = copy.deepcopy(digits_raw())
  raw["label"] = label
  raw.pop("schema")
  if evaluation is not None:
    raw["evaluation"] = evaluation
  return raw


@pytest.mark.parametrize("label,evaluation,message", [
    ({"name": "label", "kind": "regression"}, None,
     "'evaluation.threshold': expected a number: the largest rmse a model may have"),
    ({"name": "label", "kind": "regression", "num_classes": 3}, {"threshold": 1},
     "'label.num_classes': expected nothing: a regression label has no classes"),
    ({"name": "label", "num_classes": 10}, {"metric": "auc"},
     "'evaluation.metric': expected accuracy: auc needs exactly 2 classes"),
    ({"name": "label", "num_classes": 10}, {"metric": "rmse"},
     "'evaluation.metric': expected one of accuracy, auc, found 'rmse'"),
    ({"name": "label", "classes": ["a", "a"]}, None,
     "'label.classes': expected distinct class names"),
    ({"name": "label", "kind": "regression"}, {"metric": "mae", "threshold": 1, "max_change": -1},
     "'evaluation.max_change': expected a number >= 0, found -1"),
])
def test_bad_label_or_evaluation_is_named(tmp_path, label, evaluation, message):
  with pytest.raises(declaration.DeclarationError, match=message.replace("(", r"\(")):
    declaration.load(write_declaration(tmp_path, raw_with(label, evaluation)))


def test_defaults_follow_the_label(tmp_path):
  classes = declaration.load(write_declaration(tmp_path, raw_with(
      {"name": "label", "classes": NAMES})))
  assert (classes.label.num_classes, classes.evaluation.metric,
          classes.evaluation.threshold, classes.evaluation.higher_is_better) == (
      10, "accuracy", 0.9, True)
  regression = declaration.load(write_declaration(tmp_path, raw_with(
      {"name": "label", "kind": "regression"}, {"threshold": 2.5})))
  assert (regression.evaluation.metric, regression.evaluation.threshold,
          regression.evaluation.higher_is_better) == ("rmse", 2.5, False)


def named_rows(n=80):
  rows = digit_rows(n)
  return [dict(r, label=[NAMES[r["label"][0]].encode()]) for r in rows]


def test_the_check_takes_declared_names_and_names_a_stray_one(tmp_path):
  decl = declaration.load(write_declaration(tmp_path, raw_with(
      {"name": "label", "classes": NAMES})))
  rows = named_rows(3)
  for i, record in enumerate(serialize(rows)):
    check.check_example(decl, tf.train.Example.FromString(record), f"record {i}")
  rows[2]["label"] = [b"eleven"]
  with pytest.raises(declaration.DeclarationError,
                     match=r"record 2: field 'label': expected one of the declared classes "
                           r"\['zero', .*'nine'\], found 'eleven'"):
    check.check_example(decl, tf.train.Example.FromString(serialize(rows)[2]), "record 2")
  regression = declaration.load(write_declaration(tmp_path, raw_with(
      {"name": "label", "kind": "regression"}, {"threshold": 1})))
  with pytest.raises(declaration.DeclarationError,
                     match=r"field 'label': expected one float value \(float_list\)"):
    check.check_example(regression, tf.train.Example.FromString(serialize(digit_rows(1))[0]),
                        "record 0")


def transformed(tmp_path, raw, rows):
  from dataset.convert.rows import write_rows
  from tests.transform_helpers import analyze_and_transform
  write_rows(rows, str(tmp_path / "data"), "d")
  raw["data"] = {"root": str(tmp_path / "data"), "compression": "GZIP", "pattern": "*.gz"}
  decl = declaration.load(write_declaration(tmp_path, raw))
  # As `tfrecords schema` writes it: it looks at a record for names or ids.
  written = schema.from_declaration(decl, check.label_stored_as_names(decl))
  path = str(tmp_path / "schema.pbtxt")
  tf.io.write_file(path, str(written))
  raw["schema"] = path
  return analyze_and_transform(declaration.load(write_declaration(tmp_path, raw)), rows,
                               str(tmp_path))


def test_class_names_become_their_declared_positions_and_serve_with_names(tmp_path):
  rows = named_rows()
  out = transformed(tmp_path, raw_with({"name": "label", "classes": NAMES}), rows)
  label_schema = schema.from_declaration(out["decl"], True).feature[0]
  assert list(label_schema.string_domain.value) == NAMES
  ids = [int(o["label"]) for o in out["outputs"]]
  assert ids == [NAMES.index(r["label"][0].decode()) for r in rows]

  decl = out["decl"]
  output = tft.TFTransformOutput(out["transform_dir"])
  m = model.build_model(decl, run.vocab_sizes(decl), CONFIG)
  m.fit(input_pipeline.make_dataset(out["files"], output.transformed_feature_spec(), decl,
                                    CONFIG, True), steps_per_epoch=3, epochs=1, verbose=0)
  export.export_serving_model(m, output, decl, str(tmp_path / "model"))
  serve = tf.saved_model.load(str(tmp_path / "model")).signatures[export.EXAMPLES_SIGNATURE]
  served = serve(examples=tf.constant(serialize(rows[:4])))
  assert served[export.OUTPUT_KEY].shape == (4, 10)
  assert served[export.CLASSES_KEY].numpy().tolist() == [[n.encode() for n in NAMES]] * 4


def test_regression_label_trains_a_linear_unit_and_serves_a_value(tmp_path):
  rows = [dict(r, label=[float(r["label"][0]) * 1.5]) for r in digit_rows(80)]
  out = transformed(tmp_path, raw_with({"name": "label", "kind": "regression"},
                                       {"metric": "mae", "threshold": 3}), rows)
  np.testing.assert_allclose([float(o["label"]) for o in out["outputs"]],
                             [r["label"][0] for r in rows])
  decl = out["decl"]
  output = tft.TFTransformOutput(out["transform_dir"])
  m = model.build_model(decl, run.vocab_sizes(decl), CONFIG)
  assert m.output_shape == (None, 1) and m.loss == "mse"
  data = input_pipeline.make_dataset(out["files"], output.transformed_feature_spec(), decl,
                                     CONFIG, True)
  before = m.evaluate(data, steps=5, verbose=0)[0]
  # 10 steps take the squared error from about 61 to 21-28 (three seeds).
  m.fit(data, steps_per_epoch=10, epochs=1, verbose=0)
  after = m.evaluate(data, steps=5, verbose=0)[0]
  assert after < before, f"expected the squared error to fall, found {before} -> {after}"
  export.export_serving_model(m, output, decl, str(tmp_path / "model"))
  serve = tf.saved_model.load(str(tmp_path / "model")).signatures[export.EXAMPLES_SIGNATURE]
  served = serve(examples=tf.constant(serialize(rows)))
  assert set(served) == {export.VALUE_KEY} and served[export.VALUE_KEY].shape == (80, 1)
  # The raw records through the training input path give the same values.
  trained = np.concatenate([m(x, training=False).numpy() for x, _ in
                            input_pipeline.make_dataset(
                                [decl.data.root + "/*.gz"], output.raw_feature_spec(), decl,
                                CONFIG, False, transform=output.transform_features_layer())])
  np.testing.assert_allclose(np.sort(trained[:, 0]), np.sort(served[export.VALUE_KEY][:, 0]),
                             atol=1e-4)
