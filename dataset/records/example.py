"""`tf.train.Example` without TensorFlow: the same messages, built in a
descriptor pool of their own.

The declaration's check reads a dataset's first records before any run
(dataset/check.py), and its errors must come before TensorFlow's seconds of
import. TensorFlow's `example.proto` is six small messages; declared here by
the same names, numbers and types, they parse the same bytes. A pool of
their own keeps them from clashing with TensorFlow's in a process that has
both (the `tfrecord` package registers its copy in the default pool, which
does clash). `tests/unit/dataset/records/test_example.py` parses records
TensorFlow wrote and compares.
"""

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
_REPEATED, _OPTIONAL = _F.LABEL_REPEATED, _F.LABEL_OPTIONAL


def _message(file, name: str, fields, oneof: str = ""):
  """A message of `file`: fields as (name, type, label, message type), numbered
  from 1 in order, all in the oneof `oneof` if given."""
  m = file.message_type.add(name=name)
  if oneof:
    m.oneof_decl.add(name=oneof)
  for number, (field, kind, label, type_name) in enumerate(fields, 1):
    f = m.field.add(name=field, number=number, type=kind, label=label)
    if type_name:
      f.type_name = f".tensorflow.{type_name}"
    if oneof:
      f.oneof_index = 0
  return m


def _example_class():
  file = descriptor_pb2.FileDescriptorProto(
      name="dataset/records/example.proto", package="tensorflow", syntax="proto3")
  for name, kind in (("BytesList", _F.TYPE_BYTES), ("FloatList", _F.TYPE_FLOAT),
                     ("Int64List", _F.TYPE_INT64)):
    _message(file, name, [("value", kind, _REPEATED, None)])
  _message(file, "Feature", [(f, _F.TYPE_MESSAGE, _OPTIONAL, t) for f, t in (
      ("bytes_list", "BytesList"), ("float_list", "FloatList"), ("int64_list", "Int64List"))],
      oneof="kind")
  features = _message(file, "Features", [
      ("feature", _F.TYPE_MESSAGE, _REPEATED, "Features.FeatureEntry")])
  entry = features.nested_type.add(name="FeatureEntry")  # map<string, Feature>
  entry.options.map_entry = True
  entry.field.add(name="key", number=1, type=_F.TYPE_STRING, label=_OPTIONAL)
  entry.field.add(name="value", number=2, type=_F.TYPE_MESSAGE, label=_OPTIONAL,
                  type_name=".tensorflow.Feature")
  _message(file, "Example", [("features", _F.TYPE_MESSAGE, _OPTIONAL, "Features")])
  pool = descriptor_pool.DescriptorPool()
  pool.Add(file)
  return message_factory.MessageFactory(pool).GetPrototype(
      pool.FindMessageTypeByName("tensorflow.Example"))


# `Example.FromString(data)` raises google.protobuf.message.DecodeError on
# bytes that are no Example, as TensorFlow's class does.
Example = _example_class()
