"""Reads every record of TFRecord files and checks both CRCs of each.

For a GZIP file the offset of a bad record is in the decompressed stream
(the TFRecord layer's own offsets); a broken GZIP stream is reported with
the offset of the last good record's end.
"""

import dataclasses
import gzip
import zlib
from typing import Optional

from dataset.records import format as tfrecord


@dataclasses.dataclass
class FileReport:
  """One file's verification.

  Attributes:
    path: the file.
    compression: GZIP or NONE, as detected from its first bytes.
    records: good records read before the first bad one (all, if none).
    bad_offset: byte offset of the first bad record, or None.
    reason: what is wrong there.
  """
  path: str
  compression: str
  records: int = 0
  bad_offset: Optional[int] = None
  reason: str = ""

  @property
  def ok(self) -> bool:
    return self.bad_offset is None

  def line(self) -> str:
    if self.ok:
      return f"ok   {self.path}: {self.records} records ({self.compression})"
    where = "decompressed " if self.compression == "GZIP" else ""
    return (f"BAD  {self.path}: first bad record at {where}byte offset "
            f"{self.bad_offset}: {self.reason} ({self.records} good records before it)")


def verify_file(path: str) -> FileReport:
  """Checks every record's length CRC and data CRC; stops at the first bad one."""
  try:
    report = FileReport(path, tfrecord.compression_of(path))
  except OSError as e:
    return FileReport(path, "?", bad_offset=0, reason=f"cannot read: {e.strerror}")
  end = 0
  try:
    with tfrecord.open_file(path, "rb", report.compression) as f:
      for offset, data in tfrecord.iter_records(f):
        report.records += 1
        end = offset + tfrecord.HEADER + len(data) + tfrecord.FOOTER
  except tfrecord.BadRecord as e:
    report.bad_offset, report.reason = e.offset, e.reason
  except (gzip.BadGzipFile, EOFError, zlib.error) as e:
    report.bad_offset, report.reason = end, f"broken GZIP stream: {e}"
  return report
