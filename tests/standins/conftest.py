"""Fixtures of the stand-ins' own tests."""

import os

import pytest

from tests.fakes import kubernetes_api, training_engines


@pytest.fixture
def engine(tmp_path):
  """The stand-in Training Operator and kubelet over a TFJob store.
  Restarts are counted here, not timed: a 1 s back-off (the kubelet's is
  10 s), so the incidents take seconds, not minutes."""
  store = kubernetes_api.Store({"tfjobs"})
  controllers = training_engines.Controllers(store, str(tmp_path), dict(os.environ),
                                             backoff_period=1.0)
  controllers.start()
  yield store, controllers, tmp_path
  controllers.stop()
