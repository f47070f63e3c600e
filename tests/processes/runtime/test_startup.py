"""Every command answers `--help` and a bad flag before it loads TensorFlow,
TFX, Beam or kfp: each entry point runs, as a user starts it, in a fresh
process, and that process's `sys.modules` is read after each call. How fast
that is, is bench.convert_bench's business; this says what is loaded."""

import ast
import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

HEAVY = ("tensorflow", "tfx", "apache_beam", "kfp", "kfp_server_api")

# entry point -> (how runpy starts it, the subcommands whose --help is asked)
ENTRY_POINTS = {
    "local_runner.py": ("path", []),
    "commands.kubeflow": ("module", ["compile", "submit", "schedule", "schedules", "runs", "retention"]),
    "commands.debug": ("module", ["runs", "artifacts", "lineage", "report", "skew"]),
    "commands.serving": ("module", ["versions", "rollback"]),
    "commands.retention": ("module", []),
    "commands.tfrecords": ("module", ["convert", "convert table", "convert images", "convert arrays",
                       "inspect", "verify", "check", "schema"]),  # the `tfrecords` command
    "bench.convert_bench": ("module", []),
}

PROBE = """
import json, runpy, sys
kind, target, calls = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
heavy = {heavy}
for argv in calls:
  sys.argv = [target] + argv
  try:
    if kind == "path":
      runpy.run_path(target, run_name="__main__")
    else:
      runpy.run_module(target, run_name="__main__", alter_sys=True)
  except SystemExit:
    pass
  loaded = sorted({{m.split(".")[0] for m in sys.modules}} & set(heavy))
  print("PROBE " + json.dumps([argv, loaded]), flush=True)
"""


def probe(kind: str, entry: str, calls: list, heavy=HEAVY) -> subprocess.CompletedProcess:
  """Runs each call of `entry` in one fresh process; fails naming the first
  call after which one of `heavy` was loaded."""
  proc = subprocess.run([sys.executable, "-c", PROBE.format(heavy=heavy), kind, entry,
                         json.dumps(calls)], cwd=REPO, capture_output=True, text=True,
                        timeout=600)
  probes = [json.loads(line[len("PROBE "):]) for line in proc.stdout.splitlines()
            if line.startswith("PROBE ")]
  assert [argv for argv, _ in probes] == calls, proc.stdout[-2000:] + proc.stderr[-2000:]
  for argv, loaded in probes:
    assert loaded == [], f"{entry} {' '.join(argv)}: expected none of {heavy} loaded, " \
                         f"found {loaded}"
  return proc


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_help_and_a_bad_flag_load_no_heavy_library(entry):
  kind, subcommands = ENTRY_POINTS[entry]
  calls = [["--help"], ["--no-such-flag"]] + [c.split() + ["--help"] for c in subcommands]
  if subcommands:
    calls.append(subcommands[0].split() + ["--no-such-flag"])
  proc = probe(kind, entry, calls)
  # Answered: usage on --help, argparse's error line on a bad flag.
  assert "usage:" in proc.stdout and "error: " in proc.stderr, proc.stderr[-2000:]
  assert "Traceback" not in proc.stderr, proc.stderr[-3000:]


def test_tfrecords_convert_inspect_and_verify_run_without_tensorflow(tmp_path):
  table = tmp_path / "rows.csv"
  table.write_text("x,kind,label\n" + "".join(f"{i / 7},{'ab'[i % 2]},{i % 3}\n"
                                               for i in range(50)))
  out = tmp_path / "records"
  proc = probe("module", "commands.tfrecords", [
      ["convert", "table", str(table), "--label", "label", "--output", str(out)],
      ["inspect", str(out)], ["verify", str(out)]])
  assert (out / "dataset.yaml").is_file(), proc.stderr[-2000:]
  assert "50 examples" in proc.stdout and "0 bad" in proc.stdout, proc.stdout[-2000:]


def test_a_declaration_error_is_said_before_any_heavy_library_loads(tmp_path):
  """A misspelt key, a feature name no signature can take, and a label the
  records lack: each named with its fix by local_runner.py and `compile`,
  with none of TensorFlow, TFX, Beam or kfp loaded (bench.declaration_bench
  times it)."""
  table = tmp_path / "wine.csv"
  table.write_text("alcohol,od280/od315,target\n" + "".join(
      f"{i / 7},{i % 5},{i % 3}\n" for i in range(30)))
  out = tmp_path / "wine"
  probe("module", "commands.tfrecords",
        [["convert", "table", str(table), "--label", "target", "--output", str(out)]])
  good = (out / "dataset.yaml").read_text()
  bad = {"key": good.replace("num_classes:", "num_clases:"),
         "name": good.replace("od280_od315:", "od280/od315:"),
         "label": good.replace("name: target", "name: quality")}
  for case, text in bad.items():
    (out / f"{case}.yaml").write_text(text)
  calls = [["--dataset", str(out / f"{case}.yaml"), "--output-dir", str(tmp_path / "runs")]
           for case in bad]
  proc = probe("path", "local_runner.py", calls)
  compiled = probe("module", "commands.kubeflow", [
      ["compile", "--dataset", str(out / "key.yaml"), "--image", "r/i:1",
       "--pipeline-root", "gs://b/r", "--output-dir", str(tmp_path / "c")]])
  errors = [x for x in (proc.stderr + compiled.stderr).splitlines() if x.startswith("error: ")]
  assert len(errors) == 4, proc.stderr[-3000:] + compiled.stderr[-3000:]
  assert "'label.num_clases': did you mean 'num_classes'?" in errors[0], errors[0]
  assert "e.g. to 'od280_od315'" in errors[1], errors[1]
  assert ("expected the label 'quality' in every record, found no such feature in the "
          "record; the record's features are alcohol, od280_od315, target") in errors[2], errors[2]
  assert errors[3] == errors[0], errors
  assert not (tmp_path / "runs").exists() and not (tmp_path / "c").exists()


# What TensorFlow prints as it loads on a machine without a GPU, unless the
# process was set up quiet (runtime/process.py): CUDA, TensorRT, CPU features.
TF_NOISE = ("cuda", "TensorRT", "cpu_feature_guard", "FutureWarning")


def test_the_tfrecords_script_is_as_quiet_as_the_local_runner(tmp_path):
  """`.venv/bin/tfrecords`, as pyproject's [project.scripts] writes it, calls
  `commands.tfrecords.main:main` without `python -m`'s __main__: its
  TensorFlow says nothing either."""
  table = tmp_path / "rows.csv"
  table.write_text("x,label\n" + "".join(f"{i / 7},{i % 3}\n" for i in range(30)))
  out, schema = tmp_path / "records", tmp_path / "schema.pbtxt"
  script = "import sys\nfrom commands.tfrecords.main import main\nsys.exit(main())"
  for argv in (["convert", "table", str(table), "--label", "label", "--output", str(out)],
               ["schema", str(out / "dataset.yaml"), "--output", str(schema)]):
    proc = subprocess.run([sys.executable, "-c", script, *argv], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
  assert schema.is_file()
  noise = [line for line in proc.stderr.splitlines() if any(n in line for n in TF_NOISE)]
  assert not noise, proc.stderr[-3000:]


def test_talking_to_kubeflow_loads_kfp_but_not_tfx(tmp_path):
  """submit, schedules and runs need kfp's client, never TFX (only compile
  does): here against an endpoint where nothing listens."""
  spec = tmp_path / "pipeline.yaml"
  spec.write_text("pipelineInfo: {name: digits}\nroot: {}\n")
  host = "http://127.0.0.1:9"  # the discard port: nothing answers
  proc = probe("module", "commands.kubeflow", [
      ["submit", "--spec", str(spec), "--host", host],
      ["schedules", "list", "--experiment", "digits", "--host", host],
      ["runs", "--spec", str(spec), "--host", host]],
      heavy=("tensorflow", "tfx", "apache_beam"))
  lines = [x for x in proc.stderr.splitlines() if x.startswith("error: ")]
  assert len(lines) == 3 and all("127.0.0.1:9" in x for x in lines), proc.stderr[-3000:]


def _is_main_guard(node) -> bool:
  """`if __name__ == "__main__":`, whose body runs only when the module is
  the program, never when it is imported."""
  test = getattr(node, "test", None)
  return (isinstance(node, ast.If) and isinstance(test, ast.Compare)
          and isinstance(test.left, ast.Name) and test.left.id == "__name__"
          and any(isinstance(c, ast.Constant) and c.value == "__main__"
                  for c in test.comparators))


def _import_time_statements(tree):
  """The statements a module runs when imported: its top level, into
  if/try/with blocks and class bodies, not into functions nor a main guard."""
  todo = list(tree.body)
  while todo:
    node = todo.pop()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or _is_main_guard(node):
      continue
    yield node
    for field in ("body", "orelse", "finalbody", "handlers"):
      todo += [n for n in getattr(node, field, []) if isinstance(n, ast.stmt)
               or isinstance(n, ast.ExceptHandler)]


def _sets_process_state(node) -> bool:
  """os.environ[...] = / sys.modules[...] = / os.environ.update(...) etc."""
  def is_state(expr):
    return (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name)
            and (expr.value.id, expr.attr) in (("os", "environ"), ("sys", "modules")))
  for sub in ast.walk(node):
    if isinstance(sub, (ast.Assign, ast.AugAssign)):
      targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
      if any(isinstance(t, ast.Subscript) and is_state(t.value) for t in targets):
        return True
    if (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute)
        and is_state(sub.func.value) and sub.func.attr in ("update", "setdefault", "pop")):
      return True
  return False


def _calls_set_up(node) -> bool:
  """A call of startup.start() (or any startup function), or of storage's
  loading of tensorflow-io: the process set-up an entry point makes."""
  return any(isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute)
             and isinstance(sub.func.value, ast.Name)
             and (sub.func.value.id == "startup"
                  or (sub.func.value.id, sub.func.attr) in (("storage", "enable"),
                                                            ("storage", "check")))
             for sub in ast.walk(node))


def test_no_package_sets_the_process_up_when_imported():
  """Only startup.start() sets the environment or the tensorflow-io guard,
  and no module calls it when imported, only when it is the program (a Beam
  worker that unpickles our functions would otherwise get whatever its
  imports happened to set; `kubeflow compile` imports the step's module)."""
  from tests.unit.test_architecture import project_packages
  found = []
  for package in sorted(project_packages() - {"startup"}) + ["bench"]:
    for folder, _, files in os.walk(os.path.join(REPO, package)):
      for name in files:
        if name.endswith(".py"):
          path = os.path.join(folder, name)
          tree = ast.parse(open(path, encoding="utf-8").read())
          found += [f"{os.path.relpath(path, REPO)}:{node.lineno}"
                    for node in _import_time_statements(tree)
                    if isinstance(node, (ast.Assign, ast.AugAssign, ast.Expr))
                    and (_sets_process_state(node) or _calls_set_up(node))]
  assert not found, f"import-time process set-up outside runtime/: {found}"


def _last_json(probe: str, env=None):
  """What `probe`, run as a fresh process's program, printed last, as JSON."""
  proc = subprocess.run([sys.executable, "-c", probe], cwd=REPO, env=env,
                        capture_output=True, text=True, timeout=600)
  assert proc.returncode == 0, proc.stderr[-3000:]
  return json.loads(proc.stdout.strip().splitlines()[-1])


def test_start_makes_the_keras_choice_and_keeps_tensorflow_io_unloaded():
  probe = ("import os, sys, json\nfrom runtime import startup\nstartup.start()\n"
           "import tensorflow as tf, tensorflow_model_analysis\n"
           "print(json.dumps([os.environ.get('TF_USE_LEGACY_KERAS'), "
           "tf.keras.__name__.split('.')[0], sys.modules.get('tensorflow_io', 0) is None]))")
  env = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
  assert _last_json(probe, env) == ["1", "tf_keras", True]


def test_a_step_imports_its_own_executor_and_tfx_components_keeps_every_name():
  """A Kubeflow step loads its executor, not all sixteen components (nor
  keras-tuner's Keras 3); code that asks tfx.components for a component
  still gets it, and a name it lacks still raises AttributeError."""
  probe = ("import json, sys\nfrom runtime import startup\nstartup.start()\n"
           "import kubeflow.steps.entrypoint, components.drift_gate.drift_gate\n"
           "step = sorted(m for m in ('keras_tuner', 'tfx.components.bulk_inferrer', "
           "'tfx.components.tuner') if m in sys.modules)\n"
           "import tfx.components\nfrom tfx.components import Trainer\n"
           "from tfx.components.trainer.component import Trainer as T\n"
           "try:\n  tfx.components.NoSuchComponent\n  missing = 'found'\n"
           "except AttributeError:\n  missing = 'AttributeError'\n"
           "print(json.dumps([step, Trainer is T, tfx.components.Evaluator.__name__, missing]))")
  assert _last_json(probe) == [[], True, "Evaluator", "AttributeError"]


def test_a_compiled_step_leaves_kfps_compiler_and_client_unloaded():
  """With the environment the compiled spec gives every step (KFP's own
  `_KFP_RUNTIME`), a step loads the pipeline-spec protos it reads and not
  KFP's compiler, its API client or the Kubernetes client under it."""
  from kubeflow.steps.records import KFP_RUNTIME_ENV
  probe = ("import json, sys\nfrom runtime import startup\nstartup.start()\n"
           "import kubeflow.steps.entrypoint, components.drift_gate.drift_gate\n"
           "print(json.dumps(sorted(m for m in ('kfp.client', 'kfp.dsl.pipeline_context', "
           "'kubernetes', 'kfp.pipeline_spec.pipeline_spec_pb2') if m in sys.modules)))")
  env = {**os.environ, KFP_RUNTIME_ENV: "true"}
  assert _last_json(probe, env) == ["kfp.pipeline_spec.pipeline_spec_pb2"]


def test_a_training_worker_starts_without_tfx_components_tfma_or_beam():
  """A job's worker (and each restart of it) imports what training needs:
  not TFX's FnArgs module, which brings Beam and TFMA (about 1.8 s of a
  worker's start here: bench/startup_bench.py, "training worker")."""
  probe = ("import json, sys\nfrom runtime import startup\nstartup.start()\n"
           "import trainer.worker, trainer.run\n"
           "print(json.dumps(sorted(m for m in ('tfx.components.trainer.fn_args_utils', "
           "'tensorflow_model_analysis', 'apache_beam', 'tensorflow') if m in sys.modules)))")
  assert _last_json(probe, dict(os.environ)) == ["tensorflow"]
