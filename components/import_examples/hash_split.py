"""ImportExampleGen's hash split, done in one pass over the files.

TFX's executor reads every record through Beam, parses it, assigns it a
split and writes it again (`base_example_gen_executor._PartitionFn`,
`write_split.py`): 2.8k rows/s on DirectRunner (issue 20). The assignment
is cheap; the Beam machinery around it is not. This reads each input file
once, assigns each record exactly as TFX does, and writes it unchanged
(not re-encoded) into one output file per split per input file. So a run
gets the same train and eval examples as TFX's own ImportExampleGen would
give it: switching between them moves no example between splits.

TFX's assignment, kept here: the SHA-256 of the record parsed and serialized
deterministically (not of its bytes as written: the same Example may be
written in another field order), modulo the total of the hash buckets, each
split owning its buckets in the order they are declared.
"""

import bisect
import hashlib
import itertools
import multiprocessing
import os
from typing import Callable, Dict, List

import tensorflow as tf
from google.protobuf.message import DecodeError

from dataset.records.format import fast_gzip_writer, frame, read_records

FLUSH = 4096  # records per split held before a write


class NotAnExample(ValueError):
  """A record that does not parse as tf.train.Example."""


def bucket_bounds(hash_buckets: List[int]) -> List[int]:
  """The cumulative bucket counts TFX bisects: [4, 1] -> [4, 5]."""
  return list(itertools.accumulate(hash_buckets))


def split_of(record: bytes, bounds: List[int]) -> int:
  """The index of the split TFX's ImportExampleGen puts `record` in."""
  key = tf.train.Example.FromString(record).SerializeToString(deterministic=True)
  return bisect.bisect(bounds, int(hashlib.sha256(key).hexdigest(), 16) % bounds[-1])


def split_file(path: str, outputs: List[str], bounds: List[int],
               opener: Callable = tf.io.gfile.GFile) -> List[int]:
  """Writes the records of TFRecord file `path` (plain or GZIP) into the
  GZIP files `outputs`, one per split; returns the records per split.
  `opener` opens files: GFile for any URI, or the builtin `open`.

  Raises:
    BadRecord: a record's framing is broken (the path and offset named).
    NotAnExample: a record is not a tf.train.Example (the path named).
  """
  counts = [0] * len(outputs)
  pending: List[List[bytes]] = [[] for _ in outputs]
  raws = [opener(out, "wb") for out in outputs]
  streams = [fast_gzip_writer(raw) for raw in raws]
  try:
    for i, record in enumerate(read_records(path, opener=opener)):
      try:
        split = split_of(record, bounds)
      except DecodeError:
        raise NotAnExample(f"{path}: record {i}: expected a serialized "
                           f"tf.train.Example, found {len(record)} bytes that do not "
                           f"parse as one") from None
      pending[split].append(frame(record))
      counts[split] += 1
      if len(pending[split]) >= FLUSH:
        streams[split].write(b"".join(pending[split]))
        pending[split].clear()
    for stream, records in zip(streams, pending):
      stream.write(b"".join(records))
  finally:
    for stream, raw in zip(streams, raws):
      stream.close()
      raw.close()
  return counts


def _split_local(job) -> List[int]:
  return split_file(*job, opener=open)


def workers_for(files: List[str]) -> int:
  """Processes to split with: one per core this process may use, at most
  one per file; one for files behind a URI (gs://, s3://), which only
  TensorFlow's file systems open, and TensorFlow is not fork-safe."""
  if any("://" in f for f in files):
    return 1
  return max(1, min(len(files), len(os.sched_getaffinity(0))))


def hash_split(files: List[str], folders: Dict[str, str],
               hash_buckets: Dict[str, int], file_name: str) -> Dict[str, int]:
  """Splits `files` into `folders` (split -> folder) by `hash_buckets`
  (split -> buckets, in TFX's order); returns the records per split. Input
  file i becomes `<file_name>-<i>-of-<n>.gz` in every split's folder.

  Local files are split by one process per core (`workers_for`).
  """
  names = list(hash_buckets)
  bounds = bucket_bounds([hash_buckets[n] for n in names])
  for folder in folders.values():
    tf.io.gfile.makedirs(folder)
  jobs = [(path, [os.path.join(folders[n], f"{file_name}-{i:05d}-of-{len(files):05d}.gz")
                  for n in names], bounds) for i, path in enumerate(files)]
  n = workers_for(files + list(folders.values()))
  if n == 1:
    counts = [split_file(*job) for job in jobs]
  else:
    # fork: the workers parse with the protobuf classes already loaded and
    # write with isal; they never call into TensorFlow's runtime, so forking
    # a process that loaded it is safe (as dataset/convert/writer.py's workers).
    with multiprocessing.get_context("fork").Pool(n) as pool:
      counts = pool.map(_split_local, jobs, chunksize=1)
  return {name: sum(c[k] for c in counts) for k, name in enumerate(names)}
