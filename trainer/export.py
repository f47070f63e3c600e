"""The serving signature, and the SavedModel export.

`serving_default` takes a [batch] of serialized `tf.train.Example`s with the
raw features exactly as stored in the input TFRecords, applies the Transform
graph and the same image decoding as training (`trainer.image_decoding`; scaling
is in the model), and returns `{"probabilities": float32 [batch,
num_classes]}`, with `all_classes` (the class names, per example) when the
label declares classes, or `{"value": float32 [batch, 1]}` for a regression
label. The Transform graph is
part of the SavedModel, so training and serving cannot drift apart.
"""

import tensorflow as tf
import tensorflow_transform as tft

from dataset.declaration import Declaration
from trainer.image_decoding import decode_batch

SIGNATURE = "serving_default"
OUTPUT_KEY = "probabilities"
VALUE_KEY = "value"
CLASSES_KEY = "all_classes"


def prediction_key(decl: Declaration) -> str:
  """The output the Evaluator judges."""
  return VALUE_KEY if decl.label.kind == "regression" else OUTPUT_KEY


def serving_contract(decl: Declaration) -> dict:
  """What `serving_default` promises, as JSON for the serving check
  (components/serving_check/check.py): each output's dtype and shape (None: the batch), the
  output that holds class probabilities, if any, and the label, which a
  request never carries."""
  if decl.label.kind == "regression":
    outputs = {VALUE_KEY: {"dtype": "float32", "shape": [None, 1]}}
  else:
    outputs = {OUTPUT_KEY: {"dtype": "float32", "shape": [None, decl.label.num_classes]}}
    if decl.label.classes:
      outputs[CLASSES_KEY] = {"dtype": "string", "shape": [None, decl.label.num_classes]}
  return {"signature": SIGNATURE, "input": "examples", "outputs": outputs,
          "probabilities": None if decl.label.kind == "regression" else OUTPUT_KEY,
          "label": decl.label.name}


def make_serving_fn(model: tf.keras.Model, tft_output: tft.TFTransformOutput,
                    decl: Declaration):
  """The `serving_default` function: serialized raw Examples -> predictions."""
  # Tracked on the model so that the SavedModel keeps the Transform assets
  # (vocabularies) alongside it.
  model.tft_layer = tft_output.transform_features_layer()
  raw_spec = tft_output.raw_feature_spec()
  raw_spec.pop(decl.label.name, None)

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="examples")])
  def serve(serialized):
    transformed = model.tft_layer(tf.io.parse_example(serialized, raw_spec))
    inputs = {name: transformed[name] for name in decl.input_names()}
    for f in decl.of_kind("image"):
      inputs[f.name] = decode_batch(inputs[f.name], f)
    outputs = {prediction_key(decl): model(inputs, training=False)}
    if decl.label.classes:
      names = tf.constant(list(decl.label.classes))
      outputs[CLASSES_KEY] = tf.tile(names[None], [tf.shape(serialized)[0], 1])
    return outputs

  return serve


def export_serving_model(model: tf.keras.Model,
                         tft_output: tft.TFTransformOutput,
                         decl: Declaration, export_dir: str) -> None:
  """Saves the model with its `serving_default` signature to export_dir."""
  serve = make_serving_fn(model, tft_output, decl)
  model.save(export_dir, save_format="tf", signatures={SIGNATURE: serve})
