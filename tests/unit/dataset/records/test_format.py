"""Reading what convert writes: framing, CRCs, `tfrecords verify`, `tfrecords inspect`."""

import glob
import gzip
import struct

import numpy as np
import pytest
import tensorflow as tf

from commands.tfrecords.main import main
from dataset.convert.rows import serialize, write_rows
from dataset.records import format as tfrecord_format
from tests.conftest import digit_rows


def test_tensorflow_reads_back_every_record_bit_exact(written):
  compression = "" if written["compression"] == "NONE" else "GZIP"
  got = [r.numpy() for r in tf.data.TFRecordDataset(written["files"], compression)]
  assert got == written["records"]


def test_written_examples_hold_the_original_values(written):
  for raw, row in zip(written["records"], written["rows"]):
    fmap = tf.train.Example.FromString(raw).features.feature
    assert fmap["image"].bytes_list.value == row["image"]
    assert fmap["label"].int64_list.value == row["label"]
    assert list(fmap["row_ink"].int64_list.value) == row["row_ink"]
    np.testing.assert_allclose(fmap["ink"].float_list.value, row["ink"], rtol=1e-6)


def _plain_file(tmp_path, records):
  path = tmp_path / "f.tfrecord"
  path.write_bytes(b"".join(map(tfrecord_format.frame, records)))
  return path


def _offsets(records):
  out, at = [], 0
  for r in records:
    out.append(at)
    at += len(r) + 16
  return out


@pytest.mark.parametrize("damage,reason", [
    (lambda buf, at: buf.__setitem__(at + 20, buf[at + 20] ^ 0xFF), "data CRC mismatch"),
    (lambda buf, at: buf.__setitem__(at + 1, buf[at + 1] ^ 0x01), "length CRC mismatch"),
])
def test_verify_names_file_and_offset_of_the_first_bad_record(tmp_path, capsys, damage, reason):
  records = serialize(digit_rows(6))
  good = _plain_file(tmp_path, records)
  data = bytearray(good.read_bytes())
  at = _offsets(records)[3]
  damage(data, at)
  bad = tmp_path / "bad.tfrecord"
  bad.write_bytes(bytes(data))
  assert main(["verify", str(good), str(bad)]) == 1
  out = capsys.readouterr().out
  assert f"ok   {good}: 6 records (NONE)" in out
  assert f"BAD  {bad}: first bad record at byte offset {at}: {reason} (3 good records" in out
  assert "1 file(s) ok, 1 bad" in out


def test_verify_finds_truncation_inside_gzip_and_passes_good_files(tmp_path, capsys):
  records = serialize(digit_rows(5))
  plain = b"".join(map(tfrecord_format.frame, records))
  cut = _offsets(records)[4] + 10
  (tmp_path / "cut.tfrecord.gz").write_bytes(gzip.compress(plain[:cut]))
  (tmp_path / "ok.tfrecord.gz").write_bytes(gzip.compress(plain))
  assert main(["verify", str(tmp_path / "ok.tfrecord.gz")]) == 0
  assert main(["verify", str(tmp_path / "*.gz")]) == 1
  out = capsys.readouterr().out
  assert (f"cut.tfrecord.gz: first bad record at decompressed byte offset "
          f"{_offsets(records)[4]}: truncated") in out


def test_verify_reports_a_broken_gzip_stream(tmp_path, capsys):
  records = serialize(digit_rows(5))
  data = bytearray(gzip.compress(b"".join(map(tfrecord_format.frame, records))))
  data[len(data) // 2] ^= 0xFF
  (tmp_path / "x.gz").write_bytes(bytes(data))
  assert main(["verify", str(tmp_path / "x.gz")]) == 1
  assert "BAD" in capsys.readouterr().out


def test_verify_with_no_matching_file_is_an_error(tmp_path, capsys):
  assert main(["verify", str(tmp_path / "none*.tfrecord")]) == 2
  assert "no such file" in capsys.readouterr().err


def test_inspect_counts_infers_spec_and_shows_images_as_size(tmp_path, capsys):
  rows = digit_rows(30)
  rows[4].pop("shape")  # one record without the feature
  rows[7]["row_ink"] = [1, 2]
  result = write_rows(rows, str(tmp_path / "o"), "d")
  assert main(["inspect", *result.files[""], "--examples", "2"]) == 0
  out = capsys.readouterr().out
  assert f"        30  {result.files[''][0]}" in out
  assert "  image: bytes, fixed length 1, images" in out
  assert "  label: int64, fixed length 1" in out
  assert "  ink: float, fixed length 1" in out
  assert "  shape: bytes, fixed length 1, missing in 1" in out
  assert "  row_ink: int64, variable length 2..8" in out
  assert "  image: <PNG 8x8 L, " in out
  assert out.count("example ") == 2


def test_reader_checks_crc_of_what_it_reads(tmp_path):
  records = serialize(digit_rows(2))
  data = bytearray(b"".join(map(tfrecord_format.frame, records)))
  data[-1] ^= 0xFF
  path = tmp_path / "f.tfrecord"
  path.write_bytes(bytes(data))
  with pytest.raises(tfrecord_format.BadRecord, match="data CRC mismatch"):
    list(tfrecord_format.read_records(str(path)))
  assert struct.unpack("<Q", bytes(data[:8]))[0] == len(records[0])
  assert glob.glob(str(path))
