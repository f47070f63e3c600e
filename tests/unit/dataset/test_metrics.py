"""dataset/metrics.py: an interval of a metric's value stays within the
values the metric can take (TFMA's jackknife interval is symmetric about
the estimate and runs past them near an end)."""

import math

from dataset import metrics


def test_a_bounded_metrics_interval_is_clipped_at_both_ends():
  accuracy = metrics.named("accuracy")
  assert accuracy.clipped(-0.0024, 0.0069) == (0.0, 0.0069)
  assert accuracy.clipped(0.93, 1.055) == (0.93, 1.0)
  assert metrics.named("auc").clipped(0.4, 0.6) == (0.4, 0.6)  # within: as it was


def test_an_error_metric_has_a_floor_and_no_ceiling():
  rmse = metrics.named("rmse")
  assert rmse.clipped(-0.2, 3.5) == (0.0, 3.5)
  assert metrics.named("mae").bounds == (0.0, math.inf)


def test_no_interval_stays_none():
  assert metrics.named("accuracy").clipped(None, None) == (None, None)
