"""The stand-in backend (tests/fakes/kfp_backend.py) feeds an exit task's
final status as kubeflow/pipelines does, version by version: refused at
run creation before 2.14 (`argocompiler/dag.go`@2.5.0 lines 629-630); from
2.14 the exit handler DAG's state in ML Metadata, as the launchers that
ended in it left it, with an empty error (`driver/resolve.go`@2.17.0 lines
458-493, `metadata/client.go`@2.17.0 lines 800-878).

Tiny specs whose steps are `python -c` one-liners: the exit task prints the
status it was handed into its log.
"""

import json

import pytest
import yaml

from tests.fakes.kfp_backend import Backend, RunRefused, StepFailed, dag_state

PRINT_STATUS = "import json, sys; print('STATUS', json.dumps(json.loads(sys.argv[1])" \
               "['inputs']['parameterValues']['status']))"
STEPS = {"ok": "pass", "fails": "import sys; sys.exit(3)", "hangs": "import time; time.sleep(60)"}


def _spec(path, steps, declared="TASK_FINAL_STATUS", cache=False) -> str:
  """A spec whose exit handler DAG holds `steps` (STEPS' names, in a row,
  cached if `cache`), and whose exit task takes the DAG's final status,
  declared `declared`."""
  def component(name, code, args=()):
    return ({"executorLabel": f"exec-{name}"},
            {"container": {"image": "python:3.10", "command": ["python", "-c", code],
                           "args": list(args)}})
  components, executors, tasks = {}, {}, {}
  for i, name in enumerate(steps):
    components[f"comp-{name}"], executors[f"exec-{name}"] = component(name, STEPS[name])
    tasks[name] = {"componentRef": {"name": f"comp-{name}"}, "taskInfo": {"name": name},
                   "cachingOptions": {"enableCache": cache},
                   **({"dependentTasks": [steps[i - 1]]} if i else {})}
  components["comp-notify"], executors["exec-notify"] = component(
      "notify", PRINT_STATUS, ["{{$}}"])
  components["comp-notify"]["inputDefinitions"] = {"parameters": {"status": {
      "isOptional": True, "parameterType": declared}}}
  components["comp-exit-handler-1"] = {"dag": {"tasks": tasks}}
  spec = {"pipelineInfo": {"name": "tiny"}, "schemaVersion": "2.1.0", "sdkVersion": "kfp-2.5.0",
          "components": components, "deploymentSpec": {"executors": executors},
          "root": {"dag": {"tasks": {
              "exit-handler-1": {"componentRef": {"name": "comp-exit-handler-1"},
                                 "taskInfo": {"name": "exit-handler-1"}},
              "notify": {"componentRef": {"name": "comp-notify"},
                         "dependentTasks": ["exit-handler-1"],
                         "inputs": {"parameters": {"status": {
                             "taskFinalStatus": {"producerTask": "exit-handler-1"}}}},
                         "taskInfo": {"name": "notify"},
                         "triggerPolicy": {"strategy": "ALL_UPSTREAM_TASKS_COMPLETED"}}}}}}
  path.write_text(yaml.safe_dump(spec))
  return str(path)


def _fed(tmp_path, steps, version=(2, 17), **backend):
  """(the status the exit task printed, or None; the run's StepFailed or None)."""
  runner = Backend(str(tmp_path / "home"), None, version=version, **backend)
  failed = None
  try:
    runner.run(_spec(tmp_path / "spec.yaml", steps), {}, log_dir=str(tmp_path / "logs"),
               run_id="run-1")
  except StepFailed as e:
    failed = e
  finally:
    runner.close()
  log = tmp_path / "logs" / "notify.log"
  lines = [x for x in log.read_text().splitlines() if x.startswith("STATUS ")] \
      if log.exists() else []
  return (json.loads(lines[0][len("STATUS "):]) if lines else None), failed


def test_a_dag_whose_steps_completed_is_fed_complete_with_an_empty_error(tmp_path):
  status, failed = _fed(tmp_path, ["ok"])
  assert failed is None, failed
  assert status == {"state": "COMPLETE", "pipelineJobResourceName": "tiny-run-1",
                    "pipelineTaskName": "exit-handler-1", "error": {}}, status


def test_a_dag_with_a_failed_step_is_fed_failed(tmp_path):
  status, failed = _fed(tmp_path, ["ok", "fails"])
  assert str(failed).startswith("step fails exited 3"), failed
  assert status and status["state"] == "FAILED" and status["error"] == {}, status


def test_a_step_killed_before_its_launcher_published_leaves_the_dag_running(tmp_path):
  """A graceful node shutdown (Failed, not retried by 2.17's OnError policy):
  the launcher dies with the pod and publishes nothing."""
  status, failed = _fed(tmp_path, ["ok", "hangs"],
                        kills={"hangs": (lambda _: True, "shutdown")})
  assert failed is not None and failed.mlmd_state == "RUNNING", failed
  assert status and status["state"] == "RUNNING", status


def test_a_dag_every_step_of_which_came_from_the_cache_stays_running(tmp_path):
  """No launcher ends in it: a cache hit is published by the driver
  (`driver/container.go`@2.17.0 line 234), which updates no DAG."""
  runner = Backend(str(tmp_path / "home"), None)
  spec = _spec(tmp_path / "spec.yaml", ["ok"], cache=True)
  for run in ("run-1", "run-2"):
    result = runner.run(spec, {}, log_dir=str(tmp_path / run), run_id=run)
  runner.close()
  assert result.states["ok"] == "CACHED", result.states
  (line,) = [x for x in (tmp_path / "run-2" / "notify.log").read_text().splitlines()
             if x.startswith("STATUS ")]
  assert json.loads(line[len("STATUS "):])["state"] == "RUNNING", line


def test_before_2_14_a_spec_asking_for_a_final_status_starts_no_run(tmp_path):
  with pytest.raises(RunRefused) as e:
    Backend(str(tmp_path / "home"), None, version=(2, 5)).run(
        _spec(tmp_path / "spec.yaml", ["ok"]), {}, log_dir=str(tmp_path / "logs"))
  assert "failed to add implicit deps: task final status not supported yet" in str(e.value)
  assert not (tmp_path / "logs").exists(), "a refused run started a step"


def test_a_final_status_declared_a_string_as_tfx_compiles_it_fails_in_the_driver(tmp_path):
  """TFX 1.16's FinalStatusStr is declared STRING; the driver refuses a
  struct for it (resolve.go@2.17.0 line 247)."""
  runner = Backend(str(tmp_path / "home"), None)
  with pytest.raises(StepFailed) as e:
    runner.run(_spec(tmp_path / "spec.yaml", ["ok"], declared="STRING"), {},
               log_dir=str(tmp_path / "logs"))
  runner.close()
  assert 'input parameter "status" type mismatch: expect STRING, got struct' in str(e.value)


def test_the_dag_state_rule():
  assert dag_state({"a": "COMPLETE", "b": "CACHED"}, 2) == "COMPLETE"
  assert dag_state({"a": "COMPLETE", "b": "FAILED"}, 3) == "FAILED"
  assert dag_state({"a": "COMPLETE"}, 2) is None  # still running, left as it is
  assert dag_state({"a": "COMPLETE", "b": "RUNNING", "c": None}, 3) is None
