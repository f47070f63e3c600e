"""commands/debug/skew.py: served requests against a run's training
statistics. A feature served shifted past its threshold, or served by no
request, is skewed; a file that is not served Examples is one line. The
run's statistics, schema and thresholds are made here from 40 digits, as
its StatisticsGen, curated schema and DriftGate would hold them. Then the
listing on measures as TFDV's skew comparators give them: the skewed
features last, as docs/debugging.md says, and a word on a small sample."""


import pytest

from commands.debug import skew
from components.drift_gate import drift
from store.metadata import store as st


def test_a_file_that_is_not_served_examples_is_one_line(tmp_path):
  with pytest.raises(st.StoreError, match="^--examples: no file at /no/such$"):
    skew._requests("/no/such", str(tmp_path))
  text = tmp_path / "log.txt"
  text.write_text("GET /v1/models/digits:predict 200\n" * 4)
  with pytest.raises(st.StoreError, match="expected TFRecords of tf.train.Example, found a "
                                          "broken record"):
    skew._requests(str(text), str(tmp_path))
  empty = tmp_path / "empty.tfrecord"
  empty.write_bytes(b"")
  with pytest.raises(st.StoreError, match="expected served requests, found no records"):
    skew._requests(str(empty), str(tmp_path))


JS, LINF = "Jensen-Shannon divergence", "L-infinity distance"


def _measured():
  return [drift.Measured("alcohol", JS, 0.31, 0.1), drift.Measured("ash", JS, 0.02, 0.1),
          drift.Measured("color", JS, 0.45, 0.1), drift.Measured("hue", JS, 0.05, 0.1),
          drift.Measured("region", LINF, 0.04, 0.1)]


def test_the_features_within_their_thresholds_come_first_the_skewed_ones_last():
  lines, skewed = skew.listing("skew: 400 served examples", 400, _measured(), ["proline"])
  assert skewed
  assert [line.split("'")[1] for line in lines[1:-1]] == [
      "ash", "hue", "region", "alcohol", "color", "proline"], lines
  assert lines[-1] == "skewed: alcohol, color, proline"


def test_a_small_sample_says_its_size_and_why_it_flags_more_easily():
  lines, _ = skew.listing("skew: 26 served examples", 26, _measured(), [])
  assert lines[1] == ("note: 26 served examples are few: by chance alone each share of a "
                      "feature's values moves by about 1/sqrt(26) = 0.20, more than the "
                      "threshold 0.1, so features are flagged as skewed more easily; a "
                      "`skewed` holds from 100 examples (1/threshold^2) on"), lines
  enough, _ = skew.listing("skew: 100 served examples", 100, _measured(), [])
  assert not any(line.startswith("note:") for line in enough), enough
