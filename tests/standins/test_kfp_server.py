"""The stand-in Kubeflow Pipelines API server (tests/fakes/kfp_server.py)
checks every request body against the kfp-server-api models, as the real
server's generated handlers do: a wrong type, an unknown field and a value
outside an enum are each refused, naming the field."""

from tests.fakes import kfp_server


def test_request_bodies_are_checked_against_the_kfp_server_api_models():
  assert kfp_server.problems({"display_name": 1, "max_concurrency": "one"},
                             "V2beta1RecurringRun") == [
      "body.display_name: expected str, found 1",
      "body.max_concurrency: expected an int64, found 'one'"]
  assert kfp_server.problems({"displayName": "x"}, "V2beta1Run") == [
      "body.displayName: not a field of V2beta1Run"]
  assert kfp_server.problems({"status": "PAUSED"}, "V2beta1RecurringRun")[0].startswith(
      "body.status: expected one of")
