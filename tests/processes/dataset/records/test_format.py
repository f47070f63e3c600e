"""What convert writes, read back by the independent `tfrecord` package in a
process of its own, bit for bit, GZIP included."""

import hashlib
import subprocess
import sys

# The `tfrecord` package registers its own copy of the Example proto, which
# clashes with TensorFlow's in one process: it reads in a process of its own.
_INDEPENDENT_READER = """
import hashlib, sys
from tfrecord.reader import tfrecord_iterator
kind = None if sys.argv[1] == "NONE" else "gzip"
for path in sys.argv[2:]:
    for record in tfrecord_iterator(path, compression_type=kind):
        print(hashlib.sha256(bytes(record)).hexdigest())
"""


def test_independent_reader_reads_back_every_record_bit_exact(written):
  proc = subprocess.run([sys.executable, "-c", _INDEPENDENT_READER, written["compression"],
                         *written["files"]], capture_output=True, text=True, check=True)
  assert proc.stdout.split() == [hashlib.sha256(r).hexdigest() for r in written["records"]]


