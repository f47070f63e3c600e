"""The JSON signature's contract as a REST client meets it (serving/rest.py):
what each declared kind takes, a request written from real digits records,
and each request TF Serving's rules refuse, named by instance and feature.
That `serving_default` answers such requests as `serving_examples` does:
tests/integration/dataset/test_fields.py, and the serving check in every run."""

import base64
import json
import math

import numpy as np
import pytest

from dataset import declaration
from dataset.convert.rows import serialize
from serving import rest
from tests.conftest import digit_rows, digits_raw, write_declaration


@pytest.fixture(scope="module")
def specs(tmp_path_factory):
  raw = digits_raw()
  raw.pop("schema")
  raw["features"]["ink"]["required"] = False
  raw["features"]["ink"]["length"] = 2
  raw["features"]["shape"]["required"] = False
  return rest.inputs(declaration.load(write_declaration(tmp_path_factory.mktemp("d"), raw)))


def test_each_kind_takes_its_json_form(specs):
  assert specs == {
      "image": {"dtype": "string", "shape": [None], "b64": True},
      "ink": {"dtype": "float32", "shape": [None, 2], "missing": "NaN"},
      "brightness": {"dtype": "float32", "shape": [None]},
      "shape": {"dtype": "string", "shape": [None], "missing": "__missing__"},
      "row_ink": {"dtype": "int64", "shape": [None, None], "pad": -1}}


def rows():
  """Three digits: the second lacks its optional features, the sequences differ."""
  found = digit_rows(3)
  found[0]["ink"] = [0.5, 0.25]
  found[2]["ink"] = [1.0, 2.0]
  del found[1]["shape"], found[1]["ink"]
  found[0]["row_ink"], found[1]["row_ink"], found[2]["row_ink"] = [1, 2, 3], [], [4]
  return found


def test_a_request_from_records_is_what_a_client_sends(specs):
  body = json.loads(rest.request_body(serialize(rows()), specs))
  first, second, third = body["instances"]
  assert base64.b64decode(first["image"]["b64"])[:8] == b"\x89PNG\r\n\x1a\n"
  assert first["ink"] == [0.5, 0.25] and all(math.isnan(v) for v in second["ink"])
  assert second["shape"] == "__missing__" and isinstance(first["brightness"], float)
  assert [first["row_ink"], second["row_ink"], third["row_ink"]] == [
      [1, 2, 3], [-1, -1, -1], [4, -1, -1]]
  # NaN goes out as the token TF Serving's parser takes.
  assert "NaN" in rest.request_body(serialize(rows()), specs)


def test_a_request_reads_back_into_batched_tensors(specs):
  tensors = rest.decode(rest.request_body(serialize(rows()), specs), specs)
  assert {k: (v.dtype.kind, v.shape) for k, v in tensors.items()} == {
      "image": ("O", (3,)), "ink": ("f", (3, 2)), "brightness": ("f", (3,)),
      "shape": ("O", (3,)), "row_ink": ("i", (3, 3))}
  assert tensors["image"][0].startswith(b"\x89PNG") and tensors["shape"][1] == b"__missing__"
  np.testing.assert_array_equal(tensors["row_ink"][2], [4, -1, -1])


def instance(**changes) -> str:
  good = {"image": {"b64": base64.b64encode(b"png").decode()}, "ink": [1.0, 2.0],
          "brightness": 3, "shape": "tall", "row_ink": [1, 2]}
  good.update(changes)
  return json.dumps({"instances": [{k: v for k, v in good.items() if v is not ...}]})


@pytest.mark.parametrize("body, message", [
    (instance(brightness=...), "instance 0: missing the feature 'brightness' (every "
                               "instance carries every input"),
    (instance(colour="red"), "instance 0: no such feature 'colour'"),
    (instance(brightness="3"), "instance 0, feature 'brightness': \"3\" is not of expected "
                               "type: float32 (a JSON number)"),
    (instance(brightness=True), "instance 0, feature 'brightness': true is not of "
                                "expected type: float32"),
    (instance(row_ink=[1, 2.5]), "instance 0, feature 'row_ink': 2.5 is not of expected "
                                 "type: int64 (a JSON integer)"),
    (instance(shape=3), "instance 0, feature 'shape': 3 is not of expected type: string"),
    (instance(image={"b64": "###"}), "instance 0, feature 'image': unable to base64 decode"),
    (instance(image={"b64": "aGk=", "x": 1}), "instance 0, feature 'image': "),
    (instance(brightness=[3.0]), "feature 'brightness': expected one value per instance, "
                                 "found shape [1]"),
    (instance(ink=[1.0]), "feature 'ink': expected a list of 2 per instance, found shape [1]"),
    (instance(row_ink=[[1], [2]]), "feature 'row_ink': expected a list of any number of "
                                   "per instance, found shape [2, 1]"),
    (instance(ink=[1.0, [2.0]]), "instance 0, feature 'ink': a list of 1 at level 1, "
                                 "expected none"),
    ('{"instances": []}', "expected 'instances', a list of at least one object"),
    ('{"inputs": {}}', "expected 'instances', a list of at least one object"),
    ("[1]", "the request is not a JSON object"),
    ("{", "JSON Parse error: "),
])
def test_a_request_tf_serving_refuses_is_refused_naming_the_feature(specs, body, message):
  with pytest.raises(rest.RequestRefused) as refused:
    rest.decode(body, specs)
  assert str(refused.value).startswith(message), (message, str(refused.value))


def test_instances_of_one_shape_only(specs):
  first, second = json.loads(instance())["instances"][0], json.loads(instance(
      row_ink=[1, 2, 3]))["instances"][0]
  with pytest.raises(rest.RequestRefused, match=r"instance 1, feature 'row_ink': expecting "
                     r"shape \[2\] but got \[3\]"):
    rest.decode(json.dumps({"instances": [first, second]}), specs)


def test_nan_and_a_lone_input_as_tf_serving_reads_them():
  specs = {"x": {"dtype": "float32", "shape": [None], "missing": "NaN"}}
  tensors = rest.decode('{"instances": [1.5, NaN, {"x": 2}]}'.replace(', {"x": 2}', ""), specs)
  assert tensors["x"][0] == 1.5 and math.isnan(tensors["x"][1])
  with pytest.raises(rest.RequestRefused, match="instance 1: expected an object"):
    rest.decode('{"instances": [{"x": 1.0}, 2.0]}', specs)


def test_an_optional_int_beyond_float32s_integers_arrives_exact(tmp_path):
  """float32 holds every integer only up to 2^24: 16777217 sent so came back
  16777216. An optional int goes as float64 (NaN: missing), exact to 2^53,
  and the signature's graph casts it back to the int64 the records hold."""
  import tensorflow as tf

  from trainer.export import json_to_raw
  raw = digits_raw()
  raw.pop("schema")
  raw["features"] = {"count": {"kind": "numeric", "dtype": "int", "required": False}}
  specs = rest.inputs(declaration.load(write_declaration(tmp_path, raw)))
  assert specs == {"count": {"dtype": "float64", "shape": [None], "missing": "NaN"}}
  big = 2**24 + 1
  body = rest.request_body(serialize([{"count": [big], "label": [1]}, {"label": [2]}]), specs)
  assert json.loads(body)["instances"][0] == {"count": big}
  request = rest.decode(body, specs)
  parsed = json_to_raw({"count": tf.constant(request["count"])},
                       {"count": tf.io.VarLenFeature(tf.int64)}, specs)["count"]
  assert parsed.values.numpy().tolist() == [big] and parsed.indices.numpy().tolist() == [[0, 0]]
