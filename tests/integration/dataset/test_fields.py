"""Optional features (`required: false`): the declaration, the check, the
schema, the real preprocessing_fn through tft_beam, the model and serving."""

import copy

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform as tft
from tensorflow_metadata.proto.v0 import schema_pb2

from dataset import check, declaration, schema
from dataset.convert.rows import serialize, write_rows
from dataset.training import TrainingConfig
from serving import rest
from tests.conftest import digit_rows, digits_raw, write_declaration
from trainer import export, input_pipeline, model, run

CONFIG = TrainingConfig(batch_size=16)
BRIGHTNESS_DEFAULT = 0.3


def lacks(i: int) -> set:
  """Which optional features row i goes without: about a third of each."""
  gone = set()
  if i % 3 == 0:
    gone.add("ink")
  if i % 4 == 1:
    gone.add("brightness")
  if i % 5 == 2:
    gone.add("shape")
  if i % 3 == 1:
    gone.add("row_ink")
  return gone


def optional_raw() -> dict:
  raw = copy.deepcopy(digits_raw())
  for name in ("ink", "brightness", "shape", "row_ink"):
    raw["features"][name]["required"] = False
  raw["features"]["brightness"]["default"] = BRIGHTNESS_DEFAULT
  raw.pop("schema")
  return raw


@pytest.fixture(scope="module")
def optional(tmp_path_factory):
  """120 digits lacking optional features, through the real preprocessing_fn."""
  from tests.transform_helpers import analyze_and_transform
  folder = tmp_path_factory.mktemp("optional")
  full = digit_rows(120)
  rows = [{k: v for k, v in row.items() if k not in lacks(i)} for i, row in enumerate(full)]
  raw = optional_raw()
  raw["data"] = {"root": str(folder / "data"), "compression": "GZIP",
                 "splits": {"train": "train/*.gz", "eval": "eval/*.gz"}}
  write_rows(rows, str(folder / "data" / "train"), "d")
  write_rows(rows, str(folder / "data" / "eval"), "d")
  decl = declaration.load(write_declaration(folder, raw))
  schema_path = str(folder / "schema.pbtxt")
  tf.io.write_file(schema_path, str(schema.from_declaration(decl)))
  raw["schema"] = schema_path
  decl = declaration.load(write_declaration(folder, raw))
  return dict(analyze_and_transform(decl, rows, str(folder)), full=full)


def test_declaration_rejects_an_optional_image_and_a_default_on_a_required_feature(tmp_path):
  raw = optional_raw()
  raw["features"]["image"]["required"] = False
  with pytest.raises(declaration.DeclarationError,
                     match=r"field 'features.image.required': expected true: an image "
                           r"feature cannot be optional"):
    declaration.load(write_declaration(tmp_path, raw))
  raw = optional_raw()
  raw["features"]["ink"]["required"] = True
  raw["features"]["ink"]["default"] = 1.0
  with pytest.raises(declaration.DeclarationError, match=r"'features.ink.default'"):
    declaration.load(write_declaration(tmp_path, raw))


def test_the_check_accepts_a_missing_optional_feature_and_stops_at_a_required_one(optional):
  decl = optional["decl"]
  for i, row in enumerate(optional["rows"][:12]):
    check.check_example(decl, tf.train.Example.FromString(serialize([row])[0]), f"row {i}")
  row = dict(optional["rows"][0])
  del row["image"]
  with pytest.raises(declaration.DeclarationError,
                     match=r"row 0: field 'image': expected a image feature \(it is required"):
    check.check_example(decl, tf.train.Example.FromString(serialize([row])[0]), "row 0")


def test_the_schema_lets_optional_features_be_absent_and_keeps_required_ones(optional):
  written = {f.name: f for f in schema.from_declaration(optional["decl"]).feature}
  for name in ("ink", "brightness", "shape", "row_ink"):
    assert not written[name].HasField("shape"), name
    assert written[name].presence.min_fraction == 0, name
  assert written["image"].presence.min_fraction == 1.0
  assert written["label"].presence.min_fraction == 1.0
  assert written["ink"].value_count.min == written["ink"].value_count.max == 1
  assert isinstance(written["ink"], schema_pb2.Feature)


def test_missing_numerics_are_filled_and_flagged(optional):
  outputs, full = optional["outputs"], optional["full"]
  present = np.array([full[i]["ink"][0] for i in range(len(full)) if "ink" not in lacks(i)])
  mean, std = present.mean(), present.std()
  for i, out in enumerate(outputs):
    ink, flag = float(out["ink"][0]), float(out["ink__missing"][0])
    if "ink" in lacks(i):
      assert flag == 1.0 and ink == pytest.approx(0.0, abs=1e-5), (i, ink)
    else:
      assert flag == 0.0 and ink == pytest.approx((full[i]["ink"][0] - mean) / std,
                                                   abs=1e-3), i
  bright = np.array([full[i]["brightness"][0] for i in range(len(full))
                     if "brightness" not in lacks(i)])
  expected_default = (BRIGHTNESS_DEFAULT - bright.mean()) / bright.std()
  for i, out in enumerate(outputs):
    if "brightness" in lacks(i):
      assert float(out["brightness"][0]) == pytest.approx(expected_default, abs=1e-3)
      assert float(out["brightness__missing"][0]) == 1.0


def test_missing_category_gets_its_own_id_and_missing_sequence_is_empty(optional):
  # The missing value's id comes right after the declared values'.
  (shape,) = [f for f in optional["decl"].features if f.name == "shape"]
  missing_id = len(shape.values)
  for i, out in enumerate(optional["outputs"]):
    if "shape" in lacks(i):
      assert int(out["shape"]) == missing_id, i
    else:
      assert int(out["shape"]) != missing_id, i
    if "row_ink" in lacks(i):
      assert not np.any(out["row_ink"].numpy()), i
    else:
      assert np.any(out["row_ink"].numpy()), i


def test_serving_takes_examples_without_optional_features_and_agrees_with_training(
    optional, tmp_path):
  decl = optional["decl"]
  output = tft.TFTransformOutput(optional["transform_dir"])
  m = model.build_model(decl, run.vocab_sizes(decl), CONFIG)
  assert {"ink__missing", "brightness__missing"} <= set(m.input_names)
  m.fit(input_pipeline.make_dataset(optional["files"], output.transformed_feature_spec(),
                                    decl, CONFIG, True), steps_per_epoch=5, epochs=1, verbose=0)
  export.export_serving_model(m, output, decl, str(tmp_path / "model"))
  signatures = tf.saved_model.load(str(tmp_path / "model")).signatures
  serialized = serialize(optional["rows"])
  served = signatures[export.EXAMPLES_SIGNATURE](
      examples=tf.constant(serialized))[export.OUTPUT_KEY].numpy()
  assert served.shape == (120, 10)
  # The same rows as a JSON client sends them (missing optional values as
  # NaN or "__missing__", sequences padded), read by TF Serving's rules:
  # serving_default answers the same.
  specs = rest.inputs(decl)
  request = rest.decode(rest.request_body(serialized, specs), specs)
  assert np.isnan(request["ink"][[i for i in range(120) if "ink" in lacks(i)]]).all()
  assert request["shape"][2] == rest.MISSING_CATEGORY.encode()
  as_json = signatures[export.SIGNATURE](**{k: tf.constant(v) for k, v in request.items()})
  np.testing.assert_allclose(as_json[export.OUTPUT_KEY].numpy(), served, atol=1e-5)
  # The raw records through the training input path (Transform applied in the
  # pipeline, as with --no-materialize) give the same answers, in order.
  trained = np.concatenate([m(x, training=False).numpy() for x, _ in
                            input_pipeline.make_dataset(
                                [decl.data.root + "/eval/*.gz"], output.raw_feature_spec(),
                                decl, CONFIG, False,
                                transform=output.transform_features_layer())])
  np.testing.assert_allclose(np.sort(trained, axis=0), np.sort(served, axis=0), atol=1e-5)


def test_tfdv_flags_a_missing_required_feature_but_not_a_missing_optional_one(optional):
  """What ExampleValidator does with the schema `tfrecords schema` writes: the
  real TFDV statistics and validation, on records with gaps."""
  import tensorflow_data_validation as tfdv
  decl = optional["decl"]
  written = schema.from_declaration(decl)
  rows = [dict(r) for r in optional["rows"]]
  for row in rows[::7]:
    del row["image"]  # a required feature, gone from a seventh of the records
  from tfx_bsl.coders import example_coder
  batch = example_coder.ExamplesToRecordBatchDecoder().DecodeBatch(serialize(rows))
  from tensorflow_data_validation.statistics import stats_impl
  statistics = stats_impl.generate_statistics_in_memory(batch, tfdv.StatsOptions())
  anomalies = tfdv.validate_statistics(statistics, written)
  assert set(anomalies.anomaly_info) == {"image"}, dict(anomalies.anomaly_info)
