"""Calls to Vertex AI's JobService that ride out a busy API.

The Trainer step asks Vertex for its CustomJob every POLL_SECONDS for the
whole training. `aiplatform_v1`'s JobService methods have no default retry
and no default timeout (`services/job_service/transports/base.py`@1.165.1
lines 171-185: `default_timeout=None` and no `default_retry` for
create_custom_job, get_custom_job and list_custom_jobs), so one 503 or one
connection reset among hundreds of reads would fail the step while its job
trains on, and a retry of the step would reattach to it at best. So each
call here is given a timeout, and an answer that says "try again" (429,
500, 502, 503, 504, a reset, a timeout, or the metadata server briefly
unreachable while the credentials refresh) is tried again with a growing
wait, each in one log line, until RETRY_SECONDS pass without an answer;
then the step fails in one line naming the last one. Anything else (a 400,
403, 404) is no blip and is raised at once.
"""

import logging
import re
import time
from typing import Callable, Optional, TypeVar

from trainer.jobs.job import ClusterError

log = logging.getLogger("absl")
T = TypeVar("T")
CALL_TIMEOUT = 60.0  # seconds for one call's answer; a read is a few KB
RETRY_SECONDS = 600.0  # without an answer, then the step fails
FIRST_WAIT, LONGEST_WAIT = 2.0, 60.0
# google.api_core's classes for what Google's APIs answer when a call may
# simply be made again (google.rpc.Code's guidance: UNAVAILABLE,
# RESOURCE_EXHAUSTED, INTERNAL and DEADLINE_EXCEEDED are retryable).
TRANSIENT_ERRORS = ("TooManyRequests", "ResourceExhausted", "InternalServerError",
                    "BadGateway", "ServiceUnavailable", "GatewayTimeout", "DeadlineExceeded")


def api_endpoint(region: str) -> str:
  """Vertex AI's API host for `region`, as aiplatform forms it
  (initializer.py@1.165.1 lines 469-504), in any case: `global` is the
  location-free host, a multi-regional jurisdiction (`us`) its own
  (`aiplatform.us.rep.googleapis.com`, utils `mrep_endpoint`), any other
  region `<region>-aiplatform.googleapis.com`. The one home of the host
  for kubeflow/api and the Trainer step alike."""
  from google.cloud.aiplatform import utils
  from google.cloud.aiplatform.constants import base
  region = region.lower()
  if region == "global":
    return base.API_BASE_PATH
  if utils.is_mrep_location(region):
    return utils.mrep_endpoint(base.API_BASE_PATH, region)
  return f"{region}-{base.API_BASE_PATH}"


def transient(error: BaseException) -> Optional[str]:
  """What the blip was, in a few words, or None when `error` is no blip."""
  import google.auth.exceptions
  import requests
  from google.api_core import exceptions
  if isinstance(error, exceptions.GoogleAPICallError):
    if type(error).__name__ in TRANSIENT_ERRORS:
      # REST's message starts with the method and URL; the rest is enough.
      message = re.sub(r"^[A-Z]+ \S+: ", "", error.message or "")[:120]
      return f"{error.code} {message}".strip()
    return None
  if isinstance(error, requests.exceptions.Timeout):
    return f"no answer within {CALL_TIMEOUT:.0f} s"
  # ChunkedEncodingError: reset after the status line, mid-body; requests
  # does not count it a ConnectionError.
  if isinstance(error, (requests.exceptions.ConnectionError, ConnectionError,
                        requests.exceptions.ChunkedEncodingError)):
    return "the connection was reset"
  if isinstance(error, google.auth.exceptions.TransportError):
    return "no answer from the token service"  # the metadata server, briefly gone
  # google-auth's Compute Engine credentials wrap the metadata server's
  # TransportError in a RefreshError (compute_engine/credentials.py@2.x
  # lines 153-155, 550-551); a RefreshError of its own (invalid_grant, a
  # revoked account) is a refusal, and is raised.
  if isinstance(error, google.auth.exceptions.RefreshError) and any(
      isinstance(e, google.auth.exceptions.TransportError)
      for e in (error.__cause__, *error.args)):
    return "no answer from the token service"
  return None


def patiently(what: str, call: Callable[[], T], sleep=time.sleep,
              clock=time.monotonic) -> T:
  """`call()`'s answer, tried again after a blip (`transient`).

  Raises:
    ClusterError: blips for RETRY_SECONDS, naming `what` and the last one.
    Whatever else `call` raises, at once.
  """
  first, wait, tries = None, FIRST_WAIT, 0
  while True:
    try:
      return call()
    except Exception as e:  # noqa: BLE001  (sorted by `transient`; the rest re-raised)
      why = transient(e)
      if why is None:
        raise
      now = clock()
      first = now if first is None else first
      tries += 1
      if now - first + wait > RETRY_SECONDS:
        raise ClusterError(
            f"Vertex AI: could not {what}: {tries} tries in {now - first:.0f} s, the last "
            f"answered: {why}; the job may still run: a retry of the step reattaches to "
            "it") from None
      log.warning("Vertex AI: %s: %s; trying again in %.0f s", what, why, wait)
      sleep(wait)
      wait = min(wait * 2, LONGEST_WAIT)
