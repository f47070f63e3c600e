"""components/curated_schema/curated_schema.py: the curated schema travels as the step's
parameter (so editing the file changes the step's cache key), and its
executor writes it as the Schema artifact TFX's components read."""

import pytest
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx.types import standard_artifacts
from tfx.utils import io_utils

from components.curated_schema import curated_schema

SCHEMA = 'feature { name: "age" type: INT }\n'


def _run(text: str, tmp_path):
  schema = standard_artifacts.Schema()
  schema.uri = str(tmp_path / "schema")
  executor = curated_schema.CuratedSchema.EXECUTOR_SPEC.executor_class()
  executor.Do({}, {"schema": [schema]}, {"schema_text": text})
  return schema


def test_the_schema_is_written_where_tfx_reads_it(tmp_path):
  schema = _run(SCHEMA, tmp_path)
  written = io_utils.SchemaReader().read(f"{schema.uri}/{curated_schema.SCHEMA_FILE}")
  assert [f.name for f in written.feature] == ["age"]
  assert written.feature[0].type == schema_pb2.INT


def test_the_files_text_is_the_steps_parameter(tmp_path):
  path = tmp_path / "my.pbtxt"
  path.write_text(SCHEMA)
  first = curated_schema.curated_schema(str(path)).exec_properties["schema_text"]
  path.write_text(SCHEMA.replace("age", "years"))
  edited = curated_schema.curated_schema(str(path)).exec_properties["schema_text"]
  assert first == SCHEMA and "years" in edited


def test_a_schema_that_does_not_parse_names_its_source(tmp_path):
  with pytest.raises(ValueError) as raised:
    _run("feature { name: ", tmp_path)
  assert str(raised.value).startswith(
      "CuratedSchema.schema_text: expected a TFMD Schema in text format"), raised.value
  assert not (tmp_path / "schema" / curated_schema.SCHEMA_FILE).exists()
