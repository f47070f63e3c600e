"""Feature names (dataset/names.py), held against TensorFlow's own SavedModel
signatures: a name the rule accepts is an input under that very name, and
every name it refuses fails the export or comes back renamed."""

import pytest
import tensorflow as tf

from dataset import names

ACCEPTED = ["mean_radius", "Mean_Radius", "A1", "x_", "class", "a__b"]
REFUSED = ["mean radius", "od280/od315_of_diluted_wines", "fare(usd)", "pickup-area",
           "_x", "1st", "été", "a.b"]


def _signature_inputs(tmp_path, name):
  """The input names of a saved signature that takes `name`, or None when
  TensorFlow refuses to save it."""
  spec = {name: tf.TensorSpec([None], tf.float32, name=name),
          "other": tf.TensorSpec([None], tf.float32, name="other")}

  @tf.function(input_signature=[spec])
  def serve(inputs):
    return {"y": inputs[name] + inputs["other"]}

  path = str(tmp_path / "model")
  try:
    tf.saved_model.save(tf.Module(), path, signatures={"serving_default": serve})
  except ValueError:
    return None
  _, inputs = tf.saved_model.load(path).signatures["serving_default"].structured_input_signature
  return sorted(inputs)


@pytest.mark.parametrize("name", ACCEPTED)
def test_an_accepted_name_is_a_signature_input_as_it_is(tmp_path, name):
  assert names.problem(name) is None
  assert _signature_inputs(tmp_path, name) == sorted([name, "other"])


@pytest.mark.parametrize("name", REFUSED)
def test_a_refused_name_fails_the_export_or_comes_back_renamed(tmp_path, name):
  assert names.problem(name) == f"a name of {names.RULE}"
  got = _signature_inputs(tmp_path, name)
  assert got is None or name not in got, (name, got)


def test_the_missing_value_indicator_suffix_is_refused():
  assert "__missing" in names.problem("age__missing")


def test_columns_get_valid_distinct_names_and_valid_ones_stay():
  mapped = names.column_names(["mean radius", "mean_radius", "od280/od315", "fare (usd)",
                               "pickup-area", "1st", "__", "x__missing"])
  assert mapped == {"mean radius": "mean_radius_2", "mean_radius": "mean_radius",
                    "od280/od315": "od280_od315", "fare (usd)": "fare_usd",
                    "pickup-area": "pickup_area", "1st": "f_1st", "__": "feature",
                    "x__missing": "x_missing"}
  assert all(names.problem(n) is None for n in mapped.values())


def test_the_renaming_is_said_in_one_line():
  line = names.renamed_line(names.column_names(
      ["a b", "c/d", "e(f)", "g-h", "i j", "ok"]))
  assert "\n" not in line
  assert line.startswith("renamed 5 column(s) to feature names"), line
  assert "'a b' -> a_b, 'c/d' -> c_d, 'e(f)' -> e_f, 'g-h' -> g_h, and 1 more" in line
  assert names.renamed_line({"ok": "ok"}) is None
