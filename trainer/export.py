"""The serving signatures, and the SavedModel export.

Two signatures, the same predictions:

  `serving_default` takes the raw features as JSON clients send them: one
  input per declared feature, by its name (serving/rest.py says what each
  kind takes and what a missing value is). TF Serving's REST API without a
  `signature_name`, KServe's v1 protocol and Vertex AI's prebuilt
  TensorFlow containers all call `serving_default`, and Vertex AI calls no
  other; so JSON is the default.
  `serving_examples` takes a [batch] of serialized `tf.train.Example`s with
  the raw features exactly as stored in the input TFRecords. The Evaluator,
  the serving check and gRPC clients that hold Examples call it.

Both apply the Transform graph and the same image decoding as training
(`trainer.image_decoding`; scaling is in the model), and return
`{"probabilities": float32 [batch, num_classes]}`, with `all_classes` (the
class names, per example) when the label declares classes, or `{"value":
float32 [batch, 1]}` for a regression label. The Transform graph is part of
the SavedModel, so training and serving cannot drift apart.

A model pushed before `serving_examples` existed has only a `tf.Example`
`serving_default`; `examples_signature` names the one to call on a model.
"""

import tensorflow as tf
import tensorflow_transform as tft

from dataset.declaration import Declaration
from serving import rest
from trainer.image_decoding import decode_batch

SIGNATURE = "serving_default"  # JSON clients (serving/rest.py)
EXAMPLES_SIGNATURE = "serving_examples"  # serialized tf.train.Examples
OUTPUT_KEY = "probabilities"
VALUE_KEY = "value"
CLASSES_KEY = "all_classes"


def prediction_key(decl: Declaration) -> str:
  """The output the Evaluator judges."""
  return VALUE_KEY if decl.label.kind == "regression" else OUTPUT_KEY


def examples_signature(signatures) -> str:
  """The signature of a SavedModel's `signatures` that takes serialized
  Examples: `serving_examples`, or `serving_default` in a model exported
  before it existed."""
  return EXAMPLES_SIGNATURE if EXAMPLES_SIGNATURE in signatures else SIGNATURE


def serving_contract(decl: Declaration) -> dict:
  """What the signatures promise, as JSON for the serving check
  (components/serving_check/check.py): `serving_examples` takes serialized
  Examples (`input`); each output's dtype and shape (None: the batch); the
  output that holds class probabilities, if any; the label, which a request
  never carries; and `json`, `serving_default`'s inputs, which must answer
  the same."""
  if decl.label.kind == "regression":
    outputs = {VALUE_KEY: {"dtype": "float32", "shape": [None, 1]}}
  else:
    outputs = {OUTPUT_KEY: {"dtype": "float32", "shape": [None, decl.label.num_classes]}}
    if decl.label.classes:
      outputs[CLASSES_KEY] = {"dtype": "string", "shape": [None, decl.label.num_classes]}
  return {"signature": EXAMPLES_SIGNATURE, "input": "examples", "outputs": outputs,
          "probabilities": None if decl.label.kind == "regression" else OUTPUT_KEY,
          "label": decl.label.name,
          "json": {"signature": SIGNATURE, "inputs": rest.inputs(decl)}}


_TF_DTYPES = {"float32": tf.float32, "float64": tf.float64, "int64": tf.int64,
              "string": tf.string}


def _present(x: tf.Tensor, spec: dict) -> tf.Tensor:
  """Where a JSON input holds a value, not its missing or padding value."""
  if x.dtype.is_floating:
    return ~tf.math.is_nan(x)
  if "pad" in spec:
    return x != spec["pad"]
  if spec.get("missing") is not None:
    return x != spec["missing"]
  return tf.ones_like(x, tf.bool)


def _as_raw(x: tf.Tensor, dtype: tf.DType) -> tf.Tensor:
  if x.dtype == dtype:
    return x
  if x.dtype == tf.string:  # an int category, sent as its digits
    return tf.strings.to_number(x, dtype)
  return tf.cast(x, dtype)


def json_to_raw(inputs: dict, raw_spec: dict, specs: dict) -> dict:
  """The JSON signature's tensors as `tf.io.parse_example` would give the
  same records' features: a fixed-length feature dense, a variable-length
  one sparse, holding only the values present (so Transform sees a missing
  value or a shorter sequence exactly as in a tf.Example)."""
  raw = {}
  for name, spec in specs.items():
    parsed = raw_spec.get(name)
    if parsed is None:  # an optional feature training never saw: Transform fills it
      continue
    x = inputs[name]
    if x.shape.rank == 1:
      x = x[:, None]
    if isinstance(parsed, tf.io.FixedLenFeature):
      raw[name] = tf.reshape(_as_raw(x, parsed.dtype), [-1] + list(parsed.shape))
      continue
    present = _present(x, spec)
    where = tf.where(present)
    raw[name] = tf.SparseTensor(where, _as_raw(tf.gather_nd(x, where), parsed.dtype),
                                tf.shape(x, out_type=tf.int64))
  return raw


def make_serving_fns(model: tf.keras.Model, tft_output: tft.TFTransformOutput,
                     decl: Declaration) -> dict:
  """Both signatures' functions, by signature name (see the module's docstring)."""
  # Tracked on the model so that the SavedModel keeps the Transform assets
  # (vocabularies) alongside it.
  model.tft_layer = tft_output.transform_features_layer()
  raw_spec = tft_output.raw_feature_spec()
  raw_spec.pop(decl.label.name, None)
  specs = rest.inputs(decl)

  def predict(raw: dict, batch: tf.Tensor) -> dict:
    transformed = model.tft_layer(raw)
    inputs = {name: transformed[name] for name in decl.input_names()}
    for f in decl.of_kind("image"):
      inputs[f.name] = decode_batch(inputs[f.name], f)
    outputs = {prediction_key(decl): model(inputs, training=False)}
    if decl.label.classes:
      names = tf.constant(list(decl.label.classes))
      outputs[CLASSES_KEY] = tf.tile(names[None], [batch, 1])
    return outputs

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="examples")])
  def serve_examples(serialized):
    return predict(tf.io.parse_example(serialized, raw_spec), tf.shape(serialized)[0])

  @tf.function(input_signature=[{
      name: tf.TensorSpec(spec["shape"], _TF_DTYPES[spec["dtype"]], name=name)
      for name, spec in specs.items()}])
  def serve_json(inputs):
    batch = tf.shape(next(iter(inputs.values())))[0]
    return predict(json_to_raw(inputs, raw_spec, specs), batch)

  return {SIGNATURE: serve_json, EXAMPLES_SIGNATURE: serve_examples}


def export_serving_model(model: tf.keras.Model,
                         tft_output: tft.TFTransformOutput,
                         decl: Declaration, export_dir: str) -> None:
  """Saves the model with both its signatures to export_dir."""
  model.save(export_dir, save_format="tf",
             signatures=make_serving_fns(model, tft_output, decl))
