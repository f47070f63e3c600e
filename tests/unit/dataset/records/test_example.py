"""dataset/records/example.py: the Example message without TensorFlow parses
what TensorFlow writes, value for value, and refuses what is not one."""

import pytest
import tensorflow as tf
from google.protobuf import message

from dataset.records.example import Example


def test_records_tensorflow_wrote_read_the_same_without_it():
  written = tf.train.Example(features=tf.train.Features(feature={
      "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"\x89PNG\r\n"])),
      "ink": tf.train.Feature(float_list=tf.train.FloatList(value=[0.25, -1.5])),
      "row_ink": tf.train.Feature(int64_list=tf.train.Int64List(value=[3, 0, 2**40])),
      "missing": tf.train.Feature()}))
  read = Example.FromString(written.SerializeToString())
  got = {name: (f.WhichOneof("kind"), list(getattr(f, f.WhichOneof("kind")).value)
                if f.WhichOneof("kind") else None)
         for name, f in read.features.feature.items()}
  assert got == {"image": ("bytes_list", [b"\x89PNG\r\n"]), "ink": ("float_list", [0.25, -1.5]),
                 "row_ink": ("int64_list", [3, 0, 2**40]), "missing": (None, None)}
  # And back: the bytes parse as TensorFlow's own message again.
  assert tf.train.Example.FromString(read.SerializeToString()) == written


def test_bytes_that_are_no_example_are_refused():
  with pytest.raises(message.DecodeError):
    Example.FromString(b"\xff\xff\xff\xff")
