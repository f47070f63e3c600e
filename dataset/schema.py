"""A starting TFMD schema, written from a declaration, to curate by hand.

SchemaGen infers a schema from statistics, and gets two things wrong for this
kind of data: image bytes look like strings (UTF-8 warnings, meaningless string
statistics), and it guesses fixed versus variable length. The declaration
already knows both, so the schema it writes marks images with an image domain,
gives fixed-length features a shape and sequences a value count. Features
declared `required: false` get no shape and no presence requirement, so a
record without them is no anomaly, while a required feature that goes missing
still is one. A user then
adds domains (value ranges, allowed strings) that only they know, and commits
the file under `dataset/examples/`; the pipeline carries its text as the CuratedSchema
step (components/curated_schema/curated_schema.py), so it runs the same on Kubeflow.
"""

from tensorflow_metadata.proto.v0 import schema_pb2

from dataset.declaration import Declaration, Feature

_TYPES = {"bytes_list": schema_pb2.BYTES, "int64_list": schema_pb2.INT,
          "float_list": schema_pb2.FLOAT}


def _fixed(feature: schema_pb2.Feature, length: int) -> None:
  feature.shape.dim.add().size = length
  feature.presence.min_fraction = 1.0


def _optional(feature: schema_pb2.Feature, length: int) -> None:
  # No shape: a fixed shape makes Transform parse the feature as dense and
  # fail on a record without it. Presence is not required, so its absence is
  # no anomaly; when present it must have all its values.
  feature.value_count.min = feature.value_count.max = length


def _add(schema: schema_pb2.Schema, f: Feature) -> None:
  feature = schema.feature.add(name=f.name, type=_TYPES[f.proto_kind])
  if f.kind == "image":
    _fixed(feature, 1)
    feature.image_domain.SetInParent()
  elif f.kind in ("numeric", "categorical"):
    length = f.length if f.kind == "numeric" else 1
    (_fixed if f.required else _optional)(feature, length)
  else:  # a sequence: variable length, no shape; an optional one may be absent
    if f.required:
      feature.value_count.min = 1
      feature.presence.min_fraction = 1.0
    if f.dtype == "int":
      feature.int_domain.min = 0
      feature.int_domain.max = f.vocab_size - 1


def from_declaration(decl: Declaration, label_names: bool = False) -> schema_pb2.Schema:
  """The schema that the declaration implies, with the label's class range.

  Args:
    decl: the declaration.
    label_names: the records hold the label as class names (bytes), not ids.
  """
  schema = schema_pb2.Schema()
  if decl.label.kind == "regression":
    _fixed(schema.feature.add(name=decl.label.name, type=schema_pb2.FLOAT), 1)
  elif label_names:
    label = schema.feature.add(name=decl.label.name, type=schema_pb2.BYTES)
    _fixed(label, 1)
    label.string_domain.value.extend(decl.label.classes)
  else:
    label = schema.feature.add(name=decl.label.name, type=schema_pb2.INT)
    _fixed(label, 1)
    label.int_domain.min = 0
    label.int_domain.max = decl.label.num_classes - 1
  for f in decl.features:
    _add(schema, f)
  return schema
