"""The prefixes a multi-user profile namespace's keys reach
(kubeflow/profile_paths.py), as the profile controller's user policy allows
them (kubeflow/pipelines `pipelines-profile-controller/sync.py`@2.15.0
lines 370-373, @2.17.0 lines 484-487)."""

import pytest

from kubeflow import profile_paths

ALLOWED = ["s3://mlpipeline/artifacts/x", "s3://mlpipeline/private-artifacts/team-a/tfx",
           "s3://mlpipeline/private/team-a/data/wine", "s3://mlpipeline/shared/models",
           "s3://mlpipeline/private/team-a", "gs://any/where", "/mnt/data"]
REFUSED = ["s3://mlpipeline/tfx", "s3://mlpipeline/private/team-b/tfx",
           "s3://mlpipeline/private-artifacts/team-ab/tfx", "s3://mlpipeline/private",
           "s3://data/digits", "s3://mlpipeline/artifactsx/y"]


@pytest.mark.parametrize("uri", ALLOWED)
def test_the_namespaces_prefixes_and_other_stores_are_reached(uri):
  assert profile_paths.reaches("team-a", uri), f"expected team-a's keys to reach {uri}, found not"
  assert profile_paths.outside("team-a", {"--data-root": uri}) is None


@pytest.mark.parametrize("uri", REFUSED)
def test_anything_else_in_the_store_is_refused_in_one_line_naming_the_prefixes(uri):
  line = profile_paths.outside("team-a", {"--pipeline-root": "s3://mlpipeline/private/team-a/r",
                                          "--data-root": uri})
  assert line and line.startswith(f"--data-root {uri}: the profile namespace team-a's keys "), \
      f"expected the data root refused, found {line!r}"
  assert "\n" not in line
  for prefix in ("s3://mlpipeline/artifacts/", "s3://mlpipeline/private-artifacts/team-a/",
                 "s3://mlpipeline/private/team-a/", "s3://mlpipeline/shared/"):
    assert prefix in line, f"expected {prefix} named, found {line!r}"


def test_the_refusal_suggests_the_same_path_under_the_namespaces_own_prefix():
  assert profile_paths.outside("team-a", {"--pipeline-root": "s3://mlpipeline/tfx"}).endswith(
      "e.g. s3://mlpipeline/private/team-a/tfx")
  assert profile_paths.outside("team-a", {"--data-root": "s3://data/digits/"}).endswith(
      "e.g. s3://mlpipeline/private/team-a/data/digits")


def test_uris_are_found_inside_parameter_values_and_json():
  found = profile_paths.uris_in({
      "data_root": "s3://mlpipeline/private/team-a/data",
      "push_destination": '{"filesystem": {"base_directory": "s3://mlpipeline/serving"}}',
      "train_steps": "100", "pair": "s3://a/1,s3://b/2"})
  assert found == {"data_root": "s3://mlpipeline/private/team-a/data",
                   "push_destination": "s3://mlpipeline/serving",
                   "pair": "s3://a/1", "pair 2": "s3://b/2"}, found


def test_a_step_holds_the_keys_of_the_namespace_its_pod_runs_in(tmp_path):
  env = {profile_paths.PROFILE_ENV: "team-a"}
  missing = str(tmp_path / "none")
  assert profile_paths.step_namespace({}, missing) is None
  assert profile_paths.step_namespace(env, missing) == "team-a"
  mounted = tmp_path / "namespace"
  mounted.write_text("team-b")
  assert profile_paths.step_namespace(env, str(mounted)) == "team-b"
  # A single-user install's namespace: its Secret holds the install's own keys.
  mounted.write_text("kubeflow")
  assert profile_paths.step_namespace(env, str(mounted)) is None
