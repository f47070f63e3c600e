"""trainer/jobs/vertex_calls.py: which answers of Vertex AI are blips, and
how long the step keeps asking, on a clock the test moves. The Trainer
step riding them out against the stand-in is in test_vertex.py."""

import pytest
import requests
from google.api_core import exceptions
from google.auth import exceptions as auth_exceptions

from trainer.jobs import vertex_calls
from trainer.jobs.job import ClusterError


def metadata_blip() -> auth_exceptions.RefreshError:
  """What Compute Engine credentials raise when the metadata server does not
  answer a refresh (google-auth compute_engine/credentials.py lines 153-155)."""
  try:
    try:
      raise auth_exceptions.TransportError("Failed to retrieve http://metadata.google."
                                           "internal/computeMetadata/v1/instance/service-"
                                           "accounts/default/token")
    except auth_exceptions.TransportError as caught:
      raise auth_exceptions.RefreshError(caught) from caught
  except auth_exceptions.RefreshError as e:
    return e


URL = "GET http://127.0.0.1:4711/v1/projects/p/locations/us-central1/customJobs/1"


@pytest.mark.parametrize("error, words", [
    (exceptions.TooManyRequests(f"{URL}: Resource has been exhausted"),
     "429 Resource has been exhausted"),
    (exceptions.InternalServerError(f"{URL}: Internal error encountered."),
     "500 Internal error encountered."),
    (exceptions.ServiceUnavailable(f"{URL}: The service is currently unavailable."),
     "503 The service is currently unavailable."),
    (exceptions.GatewayTimeout("deadline"), "504 deadline"),
    (exceptions.DeadlineExceeded("deadline"), "504 deadline"),
    (requests.exceptions.ConnectionError("Connection aborted."), "the connection was reset"),
    (ConnectionResetError(104, "reset"), "the connection was reset"),
    (requests.exceptions.ReadTimeout("read timed out"), "no answer within 60 s"),
    (requests.exceptions.ChunkedEncodingError("Connection broken: ConnectionResetError(104)"),
     "the connection was reset"),
    (auth_exceptions.TransportError("Failed to retrieve http://metadata.google.internal"),
     "no answer from the token service"),
    (metadata_blip(), "no answer from the token service")])
def test_a_busy_apis_answers_are_blips_named_without_the_url(error, words):
  assert vertex_calls.transient(error) == words


@pytest.mark.parametrize("error", [
    exceptions.BadRequest("bad body"), exceptions.Forbidden("no"),
    exceptions.NotFound("no such job"), exceptions.Unauthorized("no token"),
    auth_exceptions.RefreshError("invalid_grant: Token has been expired or revoked.",
                                 {"error": "invalid_grant"}, retryable=False),
    ValueError("a bug")])
def test_a_refusal_or_a_bug_is_no_blip(error):
  assert vertex_calls.transient(error) is None


class Clock:
  """A clock only `sleep` moves."""

  def __init__(self):
    self.now, self.slept = 0.0, []

  def sleep(self, seconds):
    self.slept.append(seconds)
    self.now += seconds


def test_blips_are_asked_again_after_growing_waits_and_each_is_logged(caplog):
  clock, answers = Clock(), iter([exceptions.ServiceUnavailable("x"),
                                  requests.exceptions.ConnectionError("y"),
                                  exceptions.TooManyRequests("z"), "the job"])

  def call():
    answer = next(answers)
    if isinstance(answer, Exception):
      raise answer
    return answer
  with caplog.at_level("WARNING", logger="absl"):
    assert vertex_calls.patiently("read CustomJob 1", call, clock.sleep,
                                  lambda: clock.now) == "the job"
  assert clock.slept == [2.0, 4.0, 8.0]
  lines = [r.getMessage() for r in caplog.records]
  assert lines == ["Vertex AI: read CustomJob 1: 503 x; trying again in 2 s",
                   "Vertex AI: read CustomJob 1: the connection was reset; trying again in 4 s",
                   "Vertex AI: read CustomJob 1: 429 z; trying again in 8 s"]


def test_blips_without_end_fail_in_one_line_within_the_retry_time():
  clock = Clock()

  def call():
    raise exceptions.ServiceUnavailable(f"{URL}: The service is currently unavailable.")
  with pytest.raises(ClusterError) as e:
    vertex_calls.patiently("read CustomJob 1", call, clock.sleep, lambda: clock.now)
  assert clock.now <= vertex_calls.RETRY_SECONDS, clock.slept
  assert max(clock.slept) == vertex_calls.LONGEST_WAIT, clock.slept
  message = str(e.value)
  assert "\n" not in message
  assert message.startswith("Vertex AI: could not read CustomJob 1: ")
  assert "the last answered: 503 The service is currently unavailable.;" in message


def test_a_refusal_is_raised_at_once():
  clock = Clock()

  def call():
    raise exceptions.NotFound("no such job")
  with pytest.raises(exceptions.NotFound):
    vertex_calls.patiently("read CustomJob 1", call, clock.sleep, lambda: clock.now)
  assert clock.slept == []


@pytest.mark.parametrize("region, host", [
    ("europe-west4", "europe-west4-aiplatform.googleapis.com"),
    ("Europe-West4", "europe-west4-aiplatform.googleapis.com"),
    ("us", "aiplatform.us.rep.googleapis.com"),  # a jurisdiction: aiplatform's mREP host
    ("US", "aiplatform.us.rep.googleapis.com"),
    ("global", "aiplatform.googleapis.com")])
def test_a_regions_host_is_the_one_aiplatform_sends_to(region, host):
  assert vertex_calls.api_endpoint(region) == host
