"""CuratedSchema: the curated schema, carried inside the pipeline definition.

TFX's ImportSchemaGen takes a file path, which on Kubeflow would be a path
on the machine that compiled the pipeline, and whose cache key does not
change when the file's content does. This component takes the schema's
text as a parameter instead: the pipeline spec holds it, and editing the
schema re-runs what depends on it.
"""

import os

from google.protobuf import text_format
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx.dsl.component.experimental.annotations import OutputArtifact, Parameter
from tfx.dsl.component.experimental.decorators import component
from tfx.dsl.components.base import base_component
from tfx.dsl.io import fileio
from tfx.types import standard_artifacts

SCHEMA_FILE = "schema.pbtxt"


def parse_schema(text: str, source: str) -> schema_pb2.Schema:
  """Parses a schema's pbtxt text.

  Raises:
    ValueError: naming `source` and the parse error.
  """
  try:
    return text_format.Parse(text, schema_pb2.Schema())
  except text_format.ParseError as e:
    raise ValueError(f"{source}: expected a TFMD Schema in text format, "
                     f"found a parse error: {e}") from None


@component
def CuratedSchema(
    schema_text: Parameter[str],
    schema: OutputArtifact[
        standard_artifacts.Schema]) -> None:
  """Writes `schema_text` as the Schema artifact (`schema.pbtxt`)."""
  parsed = parse_schema(schema_text, "CuratedSchema.schema_text")
  fileio.makedirs(schema.uri)
  with fileio.open(os.path.join(schema.uri, SCHEMA_FILE), "w") as f:
    f.write(text_format.MessageToString(parsed))


def curated_schema(path: str) -> base_component.BaseComponent:
  """The CuratedSchema component for the schema file at `path`."""
  with open(path, encoding="utf-8") as f:
    text = f.read()
  parse_schema(text, path)
  return CuratedSchema(schema_text=text)
