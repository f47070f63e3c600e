"""The TFRecord file format, read and written without TensorFlow.

Each record is framed as

    uint64 length | uint32 masked_crc32c(length) | data | uint32 masked_crc32c(data)

little-endian, and a GZIP file is that stream compressed. Writing and reading
here needs no TensorFlow import, so worker processes start fast and are safe
to fork; `tests/unit/dataset/records/test_format.py` checks that TensorFlow and an independent
reader read what this writes, bit for bit.
"""

import gzip
import struct
from typing import BinaryIO, Callable, Iterator, Optional, Tuple

import google_crc32c

_MASK_DELTA = 0xA282EAD8
HEADER = 12  # length (8) + its CRC (4)
FOOTER = 4  # the data's CRC


def masked_crc(data: bytes) -> int:
  crc = google_crc32c.value(data)
  return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def frame(data: bytes) -> bytes:
  """One record, framed: what a TFRecord file holds for `data`."""
  length = struct.pack("<Q", len(data))
  return b"".join((length, struct.pack("<I", masked_crc(length)), data,
                   struct.pack("<I", masked_crc(data))))


def open_file(path: str, mode: str, compression: str) -> BinaryIO:
  """Opens a TFRecord file for 'rb' or 'wb'; compression is GZIP or NONE."""
  if compression == "GZIP":
    # Level 6 is zlib's and TensorFlow's default: a fair size/speed trade.
    return gzip.open(path, mode, compresslevel=6) if "w" in mode else gzip.open(path, mode)
  return open(path, mode)


# ISA-L's igzip at its highest level: the GZIP format TensorFlow and `gzip`
# read, written about ten times faster than zlib's level 6 (files ~13%
# larger; bench.convert_bench prints both sizes).
FAST_GZIP_LEVEL = 3


def fast_gzip_writer(raw: BinaryIO) -> BinaryIO:
  """A GZIP stream writing into the open binary file `raw`, by ISA-L."""
  from isal import igzip
  return igzip.IGzipFile(fileobj=raw, mode="wb", compresslevel=FAST_GZIP_LEVEL)


def compression_of(path: str, opener: Callable[[str, str], BinaryIO] = open) -> str:
  """GZIP if the file starts with the GZIP magic bytes, else NONE. `opener`
  as in `read_records`."""
  with opener(path, "rb") as f:
    return "GZIP" if f.read(2) == b"\x1f\x8b" else "NONE"


class BadRecord(Exception):
  """A record whose framing is broken.

  Attributes:
    offset: byte offset of the record's start, in the uncompressed stream.
    reason: what is wrong.
    path: the file, when the reader knows it.
  """

  def __init__(self, offset: int, reason: str, path: str = ""):
    super().__init__(f"{path + ': ' if path else ''}byte offset {offset}: {reason}")
    self.offset = offset
    self.reason = reason
    self.path = path


def iter_records(f: BinaryIO, check_crc: bool = True
                 ) -> Iterator[Tuple[int, bytes]]:
  """Yields (offset, data) for each record of an open TFRecord stream.

  Raises:
    BadRecord: at the first record with a bad length CRC, a bad data CRC, or
      a truncated end.
  """
  offset = 0
  while True:
    header = f.read(HEADER)
    if not header:
      return
    if len(header) < HEADER:
      raise BadRecord(offset, f"truncated header: {len(header)} of {HEADER} bytes")
    length_bytes, length_crc = header[:8], struct.unpack("<I", header[8:])[0]
    if check_crc and masked_crc(length_bytes) != length_crc:
      raise BadRecord(offset, "length CRC mismatch")
    (length,) = struct.unpack("<Q", length_bytes)
    data = f.read(length)
    footer = f.read(FOOTER)
    if len(data) < length or len(footer) < FOOTER:
      raise BadRecord(offset, f"truncated record: expected {length} data bytes "
                              f"and a CRC, the file ends first")
    if check_crc and masked_crc(data) != struct.unpack("<I", footer)[0]:
      raise BadRecord(offset, "data CRC mismatch")
    yield offset, data
    offset += HEADER + length + FOOTER


def read_records(path: str, limit: Optional[int] = None,
                 compression: Optional[str] = None,
                 opener: Callable[[str, str], BinaryIO] = open) -> Iterator[bytes]:
  """The records of a file, CRC-checked; compression is detected if not given.

  `opener` opens the file ('rb'): `tf.io.gfile.GFile` reads gs:// and other
  URIs, while this module itself needs no TensorFlow.
  """
  compression = compression or compression_of(path, opener)
  with opener(path, "rb") as raw:
    f = gzip.GzipFile(fileobj=raw) if compression == "GZIP" else raw
    for i, (_, data) in enumerate(iter_records(f)):
      if limit is not None and i >= limit:
        return
      yield data
