"""commands/debug/skew.py's listing, on measures as TFDV's skew comparators
give them (components/drift_gate/drift.py `Measured`): the skewed features
last, as docs/debugging.md says, and a word on a small sample. (`skew` on a
real run's statistics: tests/e2e/test_e2e.py.)"""

from commands.debug.skew import listing
from components.drift_gate.drift import Measured

JS, LINF = "Jensen-Shannon divergence", "L-infinity distance"


def _measured():
  return [Measured("alcohol", JS, 0.31, 0.1), Measured("ash", JS, 0.02, 0.1),
          Measured("color", JS, 0.45, 0.1), Measured("hue", JS, 0.05, 0.1),
          Measured("region", LINF, 0.04, 0.1)]


def test_the_features_within_their_thresholds_come_first_the_skewed_ones_last():
  lines, skewed = listing("skew: 400 served examples", 400, _measured(), ["proline"])
  assert skewed
  assert [line.split("'")[1] for line in lines[1:-1]] == [
      "ash", "hue", "region", "alcohol", "color", "proline"], lines
  assert lines[-1] == "skewed: alcohol, color, proline"


def test_a_small_sample_says_its_size_and_why_it_flags_more_easily():
  lines, _ = listing("skew: 26 served examples", 26, _measured(), [])
  assert lines[1] == ("note: 26 served examples are few: by chance alone each share of a "
                      "feature's values moves by about 1/sqrt(26) = 0.20, more than the "
                      "threshold 0.1, so features are flagged as skewed more easily; a "
                      "`skewed` holds from 100 examples (1/threshold^2) on"), lines
  enough, _ = listing("skew: 100 served examples", 100, _measured(), [])
  assert not any(line.startswith("note:") for line in enough), enough
