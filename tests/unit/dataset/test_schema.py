"""`tfrecords schema`: the starting schema a declaration implies."""

from google.protobuf import text_format
from tensorflow_metadata.proto.v0 import schema_pb2

from commands.tfrecords.main import main
from dataset import declaration, schema
from tests.conftest import DIGITS_SCHEMA, DIGITS_YAML


def _features(s):
  return {f.name: f for f in s.feature}


def test_schema_from_declaration_types_shapes_and_domains():
  s = _features(schema.from_declaration(declaration.load(DIGITS_YAML)))
  assert s["image"].type == schema_pb2.BYTES and s["image"].HasField("image_domain")
  assert [d.size for d in s["image"].shape.dim] == [1]
  assert (s["label"].int_domain.min, s["label"].int_domain.max) == (0, 9)
  assert s["ink"].type == schema_pb2.FLOAT and [d.size for d in s["ink"].shape.dim] == [1]
  assert not s["row_ink"].HasField("shape")  # variable length
  assert (s["row_ink"].int_domain.min, s["row_ink"].int_domain.max) == (0, 8)


def test_curated_digits_schema_is_the_generated_one_plus_domains():
  with open(DIGITS_SCHEMA) as f:
    curated = _features(text_format.Parse(f.read(), schema_pb2.Schema()))
  generated = _features(schema.from_declaration(declaration.load(DIGITS_YAML)))
  assert set(curated) == set(generated)
  for name, feature in generated.items():
    mine = schema_pb2.Feature()
    mine.CopyFrom(curated[name])
    mine.ClearField("float_domain")
    mine.ClearField("string_domain")
    assert mine == feature, name


def test_cli_writes_schema_and_never_overwrites_silently(tmp_path, capsys):
  out = tmp_path / "s.pbtxt"
  assert main(["schema", DIGITS_YAML, "--output", str(out)]) == 0
  written = text_format.Parse(out.read_text(), schema_pb2.Schema())
  assert written == schema.from_declaration(declaration.load(DIGITS_YAML))
  out.write_text("# curated by hand\n")
  assert main(["schema", DIGITS_YAML, "--output", str(out)]) == 2
  assert "exists" in capsys.readouterr().err
  assert out.read_text() == "# curated by hand\n"
