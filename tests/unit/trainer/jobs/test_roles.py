"""trainer/jobs/roles.py: each worker's role from what its engine gives it."""

import json

import pytest

from trainer.jobs import roles


def test_a_trainjob_pod_names_every_worker_as_jobset_names_its_pods():
  env = {"JOB_COMPLETION_INDEX": "1", roles.JOB_ENV: "train-abc", roles.WORKERS_ENV: "3",
         roles.PORT_ENV: "2222"}
  config = json.loads(roles.tf_config(env))
  assert config == {"cluster": {"worker": ["train-abc-node-0-0.train-abc:2222",
                                           "train-abc-node-0-1.train-abc:2222",
                                           "train-abc-node-0-2.train-abc:2222"]},
                    "task": {"type": "worker", "index": 1}}
  assert roles.describe(json.dumps(config)) == "worker 1 of 3"


def test_tf_config_from_the_engine_is_kept_and_aliases_rewrite_only_addresses():
  given = {"cluster": {"chief": ["j-chief-0.ns.svc:2222"], "worker": ["j-worker-0.ns.svc:2222"]},
           "task": {"type": "chief", "index": 0}}
  assert json.loads(roles.tf_config({"TF_CONFIG": json.dumps(given)})) == given
  aliased = json.loads(roles.tf_config({
      "TF_CONFIG": json.dumps(given),
      roles.ALIASES_ENV: json.dumps({"j-worker-0.ns.svc": "127.0.0.1:4000"})}))
  assert aliased["cluster"] == {"chief": ["j-chief-0.ns.svc:2222"], "worker": ["127.0.0.1:4000"]}
  assert aliased["task"] == given["task"]
  assert roles.describe(json.dumps(given)) == "chief 0 of 2"


def test_one_process_has_no_role():
  assert roles.tf_config({}) is None
  assert roles.describe(None) == "the only worker"


@pytest.mark.parametrize("index,expected", [("", "found ''"), ("x", "found 'x'"),
                                            ("3", "outside the TRAIN_WORKERS=3")])
def test_a_trainjob_pod_without_a_usable_index_says_what_it_found(index, expected):
  env = {roles.JOB_ENV: "train-abc", roles.WORKERS_ENV: "3"}
  if index:
    env["JOB_COMPLETION_INDEX"] = index
  with pytest.raises(roles.RoleError, match="worker of TrainJob train-abc: ") as e:
    roles.tf_config(env)
  assert expected in str(e.value)
