"""One run, or a recurring run, on a Kubeflow Pipelines endpoint.

Everything goes through `kfp.Client` (the v2beta1 REST API). Each operation
either completes or leaves nothing behind: a pipeline version uploaded for a
run or a schedule that could not be created is deleted again, and replacing
a schedule pauses the old one first and brings it back if the new one fails.
"""

import datetime
import json
from typing import Dict, List, Optional, Tuple

import kfp
import kfp_server_api
import requests

from kubeflow.api import multi_user, schedules
from kubeflow.errors import KubeflowError

HEALTHZ = "/apis/v2beta1/healthz"


def describe(e: Exception) -> str:
  """One line for an error from the Kubeflow API (or any other)."""
  if isinstance(e, kfp_server_api.ApiException):
    body = (e.body or "").strip().replace("\n", " ")
    return f"HTTP {e.status} {e.reason}: {body[:300]}"
  return str(e).splitlines()[0] if str(e) else type(e).__name__


def healthz(host: str, token: Optional[str] = None) -> Dict:
  """The API server's healthz ({} for no JSON): `multi_user`, `tag_name`
  (kubeflow/pipelines@2.17.0 backend/src/apiserver/main.go lines 465-491,
  510-512; @2.15.0 line 364). Raises KubeflowError as `connect` does."""
  headers = {"Authorization": f"Bearer {token}"} if token else {}
  try:
    response = requests.get(host.rstrip("/") + HEALTHZ, headers=headers, timeout=15)
  except requests.RequestException as e:
    raise KubeflowError(f"cannot reach Kubeflow Pipelines at {host}: "
                        f"{type(e).__name__}") from None
  if response.status_code in (401, 403):
    raise KubeflowError(f"Kubeflow Pipelines at {host} rejected the credentials "
                        f"(HTTP {response.status_code}); pass --token, or check "
                        f"KF_PIPELINES_SA_TOKEN_PATH")
  if response.status_code != 200:
    raise KubeflowError(f"Kubeflow Pipelines at {host} answered HTTP "
                        f"{response.status_code} to {HEALTHZ}; is this its API endpoint?")
  return response.json() if "json" in response.headers.get("Content-Type", "") else {}


def connect(host: str, namespace: Optional[str] = None,
            token: Optional[str] = None) -> kfp.Client:
  """A client for `host`, after one quick check that it answers and accepts us.

  Args:
    host: the API endpoint, e.g. http://localhost:8080 through a port-forward.
    namespace: the Kubeflow profile namespace (multi-user installations).
    token: a bearer token, or None for an endpoint without authentication.

  Raises:
    KubeflowError: the endpoint is unreachable or rejects the credentials.
  """
  multi_user.require_namespace(host, healthz(host, token), namespace)
  return kfp.Client(host=host, namespace=namespace, existing_token=token)


def find_experiment(client: kfp.Client, name: str, namespace: Optional[str]) -> str:
  """The id of experiment `name`.

  Raises:
    KubeflowError: there is none.
  """
  try:
    return client.get_experiment(experiment_name=name, namespace=namespace).experiment_id
  except ValueError:
    raise KubeflowError(f"no experiment named {name!r}") from None


def _upload(client: kfp.Client, spec_path: str, name: str,
            namespace: Optional[str]) -> Tuple[str, str, bool]:
  """Uploads the spec as a new version of pipeline `name` (created if new),
  the namespace's on a multi-user install (multi_user.py).

  Returns:
    (pipeline id, version id, whether the pipeline itself was created).
  """
  pipeline_id = multi_user.pipeline_id(client, name, namespace)
  if pipeline_id is None:
    pipeline = client.upload_pipeline(spec_path, pipeline_name=name, namespace=namespace)
    versions = client.list_pipeline_versions(pipeline.pipeline_id).pipeline_versions
    return pipeline.pipeline_id, versions[0].pipeline_version_id, True
  stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S-%f")
  version = client.upload_pipeline_version(
      spec_path, pipeline_version_name=f"{name}-{stamp}", pipeline_id=pipeline_id)
  return pipeline_id, version.pipeline_version_id, False


def _undo(what: str, calls) -> str:
  """Runs the clean-up `calls` after a failure; "" when they all went
  through, else a second line saying what is left and why. A clean-up's own
  failure never takes the place of the first error (a multi-user 2.17
  server refuses a profile's user the delete of a shared pipeline's version:
  `pipeline_server.go`@2.17.0 lines 1290-1305)."""
  try:
    for call in calls:
      call()
  except (kfp_server_api.ApiException, ValueError) as e:
    return f"\nalso: {what} failed: {describe(e)}"
  return ""


def _undo_upload(client: kfp.Client, pipeline_id: str, version_id: str,
                 created: bool) -> str:
  calls = [lambda: client.delete_pipeline_version(pipeline_id, version_id)]
  if created:
    calls.append(lambda: client.delete_pipeline(pipeline_id))
  return _undo(f"deleting the uploaded pipeline version {version_id} (left on the "
               "server: delete it in the UI)", calls)


def submit(client: kfp.Client, spec_path: str, pipeline_name: str,
           experiment: str, run_name: str, params: Dict,
           namespace: Optional[str] = None, pipeline_root: Optional[str] = None):
  """Uploads the spec and starts one run of it.

  The backend never reads the spec's own root: a run that names none writes
  under the namespace's kfp-launcher default (kubeflow/steps/backend.py), so
  the root is sent as the run's.

  Returns:
    The created run (kfp_server_api.V2beta1Run).

  Raises:
    KubeflowError: nothing is left uploaded then.
  """
  try:
    experiment_id = client.create_experiment(experiment, namespace=namespace).experiment_id
    pipeline_id, version_id, created = _upload(client, spec_path, pipeline_name, namespace)
  except (kfp_server_api.ApiException, ValueError) as e:
    raise KubeflowError(f"upload of {spec_path} failed: {describe(e)}") from None
  try:
    return client.run_pipeline(experiment_id, run_name, params=params,
                               pipeline_id=pipeline_id, version_id=version_id,
                               pipeline_root=pipeline_root)
  except kfp_server_api.ApiException as e:
    undone = _undo_upload(client, pipeline_id, version_id, created)
    raise KubeflowError(f"creating the run failed: {describe(e)}{undone}") from None


def recurring_runs(client: kfp.Client, name: Optional[str], experiment_id: str) -> List:
  """The recurring runs called `name` in the experiment (all for None)."""
  found, token = [], ""
  while True:
    page = client.list_recurring_runs(experiment_id=experiment_id,
                                      page_token=token, page_size=100)
    found += [r for r in page.recurring_runs or [] if name in (None, r.display_name)]
    token = page.next_page_token
    if not token:
      return found


def recent_runs(client: kfp.Client, experiment_id: str, pipeline_id: Optional[str],
                limit: int) -> List:
  """The newest `limit` runs in the experiment of this pipeline (all its
  versions; runs of other pipelines in the experiment are left out)."""
  found, token = [], ""
  while len(found) < limit:
    page = client.list_runs(experiment_id=experiment_id, page_token=token,
                            page_size=100, sort_by="created_at desc")
    found += [r for r in page.runs or [] if pipeline_id is None or not r.pipeline_version_reference
              or r.pipeline_version_reference.pipeline_id == pipeline_id]
    token = page.next_page_token
    if not token:
      break
  return found[:limit]


def schedule(client: kfp.Client, spec_path: str, pipeline_name: str,
             experiment: str, name: str, cron_expression: str, params: Dict,
             no_catchup: bool = True, namespace: Optional[str] = None,
             pipeline_root: Optional[str] = None):
  """Creates the recurring run `name`, or replaces the one of that name.

  Kubeflow's API cannot edit a recurring run, so replacing means: pause the
  old one, create the new one, delete the old one; if creating fails, the old
  one is resumed and the uploaded version deleted. At most one schedule of a
  name is ever active, and each runs one pipeline run at a time.

  Returns:
    (the new recurring run, how many old ones it replaced).

  Raises:
    CronError: before anything is uploaded.
    KubeflowError: with the previous state restored.
  """
  expression = schedules.normalize(cron_expression)
  try:
    experiment_id = client.create_experiment(experiment, namespace=namespace).experiment_id
    old = recurring_runs(client, name, experiment_id)
    pipeline_id, version_id, created = _upload(client, spec_path, pipeline_name, namespace)
  except (kfp_server_api.ApiException, ValueError) as e:
    raise KubeflowError(f"upload of {spec_path} failed: {describe(e)}") from None
  paused = [r for r in old if r.status == "ENABLED"]
  try:
    for r in paused:
      client.disable_recurring_run(r.recurring_run_id)
    new = client.create_recurring_run(
        experiment_id, name, cron_expression=expression, max_concurrency=1,
        no_catchup=no_catchup, params=params, pipeline_id=pipeline_id,
        version_id=version_id, enabled=True, pipeline_root=pipeline_root)
  except kfp_server_api.ApiException as e:
    resumed = _undo("re-enabling the schedules paused for the new one", [
        lambda r=r: client.enable_recurring_run(r.recurring_run_id) for r in paused])
    undone = _undo_upload(client, pipeline_id, version_id, created)
    raise KubeflowError(f"creating the schedule {name!r} failed: {describe(e)}"
                        f"{resumed}{undone}") from None
  for r in old:
    client.delete_recurring_run(r.recurring_run_id)
  return new, len(old)


def runtime_params(data_root: Optional[str] = None, train_steps: Optional[int] = None,
                   serving_dir: Optional[str] = None,
                   extra: Optional[Dict[str, str]] = None,
                   declared: Optional[Dict] = None, scheduled_by: str = "") -> Dict[str, str]:
  """Runtime parameter values, in the form the compiled pipeline takes.

  `train_args` is the JSON of TFX's TrainArgs proto, as the pipeline's own
  default is. A pipeline compiled before the serving dir was one string
  takes it as `push_destination`, a PushDestination's JSON. A pipeline
  over spans (whose declared parameters have `train_steps`) takes the steps
  as they are: its first step builds the TrainArgs with the window's splits.
  """
  params = dict(extra or {})
  if data_root:
    params["data_root"] = data_root
  if train_steps and "train_steps" in (declared or {}):
    params["train_steps"] = str(train_steps)
  elif train_steps:
    params["train_args"] = json.dumps({"num_steps": train_steps})
  if serving_dir and "push_destination" in (declared or {}):
    params["push_destination"] = json.dumps(
        {"filesystem": {"base_directory": serving_dir}})
  elif serving_dir:
    params["serving_dir"] = serving_dir
  if scheduled_by and "scheduled_by" in (declared or {}):
    params["scheduled_by"] = scheduled_by  # for the model card
  return params
