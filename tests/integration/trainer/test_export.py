"""Each label kind trained for real: class names (strings) become their
declared positions and serve with names, and a regression label trains a
linear unit and serves a value, through the real preprocessing_fn on
tft_beam, the model builder and the serving signature."""

import numpy as np
import tensorflow as tf
import tensorflow_transform as tft

from dataset import check, declaration, schema
from dataset.convert.rows import serialize
from tests.conftest import digit_rows, write_declaration
from tests.unit.dataset.test_declaration_labels import CONFIG, NAMES, named_rows, raw_with
from trainer import export, input_pipeline, model, run


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
