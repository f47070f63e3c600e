"""store/retention/plan.py: what retention of a local pipeline deletes, and
what stays, on an in-memory ML Metadata store recorded as TFX records runs
(a context per run, per node and for the pipeline) and files in tmp_path.

Three runs, keeping the newest: run 1 trained and pushed version 1, run 2
trained a model that was not pushed, run 3 is kept."""

import os

import pytest
from ml_metadata import metadata_store
from ml_metadata.proto import metadata_store_pb2 as pb

from store.retention import plan as planning

PIPELINE = "digits"


class Recorder:
  """Records executions in an in-memory store as TFX's launcher does."""

  def __init__(self, root: str):
    config = pb.ConnectionConfig()
    config.fake_database.SetInParent()
    self.store = metadata_store.MetadataStore(config)
    self.root = root
    self.types = {}
    self.pipeline = self._context("pipeline", PIPELINE)

  def _type(self, kind, name):
    if (kind, name) not in self.types:
      if kind == "artifact":
        t = pb.ArtifactType(name=name)
        if name == "Examples":
          t.properties["split_names"] = pb.STRING
        self.types[kind, name] = self.store.put_artifact_type(t)
      elif kind == "execution":
        self.types[kind, name] = self.store.put_execution_type(pb.ExecutionType(name=name))
      else:
        self.types[kind, name] = self.store.put_context_type(pb.ContextType(name=name))
    return self.types[kind, name]

  def _context(self, kind, name):
    [context_id] = self.store.put_contexts([pb.Context(type_id=self._type("context", kind),
                                                       name=name)])
    return self.store.get_contexts_by_id([context_id])[0]

  def run(self, run_id: str):
    context = self._context("pipeline_run", run_id)
    self.store.put_parent_contexts([pb.ParentContext(child_id=context.id,
                                                     parent_id=self.pipeline.id)])
    return context

  def artifact(self, kind: str, where: str, size: int = 10, splits: str = "",
               **custom) -> pb.Artifact:
    """An artifact whose folder holds `size` bytes (`where` under the root,
    unless absolute)."""
    uri = where if os.path.isabs(where) else os.path.join(self.root, where)
    os.makedirs(uri, exist_ok=True)
    with open(os.path.join(uri, "data"), "wb") as f:
      f.write(b"x" * size)
    artifact = pb.Artifact(type_id=self._type("artifact", kind), uri=uri, state=pb.Artifact.LIVE)
    if splits:
      artifact.properties["split_names"].string_value = splits
    for key, value in custom.items():
      artifact.custom_properties[key].string_value = value
    return artifact

  def execute(self, run, node: str, inputs: dict, outputs: dict) -> dict:
    """Records `node`'s execution in `run`; returns its outputs, with ids."""
    contexts = [self.pipeline, run]
    node_context = self.store.get_context_by_type_and_name("node", f"{PIPELINE}.{node}")
    contexts.append(node_context or self._context("node", f"{PIPELINE}.{node}"))
    execution = pb.Execution(type_id=self._type("execution", node),
                             last_known_state=pb.Execution.COMPLETE)

    def event(kind, key):
      return pb.Event(type=kind, path=pb.Event.Path(steps=[pb.Event.Path.Step(key=key),
                                                           pb.Event.Path.Step(index=0)]))
    pairs = ([(a, event(pb.Event.INPUT, k)) for k, a in inputs.items()]
             + [(a, event(pb.Event.OUTPUT, k)) for k, a in outputs.items()])
    _, artifact_ids, _ = self.store.put_execution(execution, pairs, contexts)
    written = self.store.get_artifacts_by_id(artifact_ids[len(inputs):])
    return dict(zip(outputs, written))


@pytest.fixture
def history(tmp_path):
  """Run 1 pushed version 1, run 2 trained a model not pushed, run 3 kept;
  an analyzer cache entry per span."""
  root, serving_dir = str(tmp_path / "root"), str(tmp_path / "serving")
  r = Recorder(root)
  run1, run2, run3 = r.run("run-1"), r.run("run-2"), r.run("run-3")
  a = {}
  imported = r.execute(run1, "ImportExampleGen", {}, {
      "examples": r.artifact("Examples", "ImportExampleGen/1", 100,
                             '["train_span1", "eval_span1"]')})["examples"]
  a["stats1"] = r.execute(run1, "StatisticsGen", {"examples": imported}, {
      "statistics": r.artifact("ExampleStatistics", "StatisticsGen/1", 7)})["statistics"]
  transform = r.execute(run1, "Transform", {"examples": imported}, {
      "transform_graph": r.artifact("TransformGraph", "Transform/graph/1", 20),
      "transformed_examples": r.artifact("Examples", "Transform/examples/1", 30)})
  model1 = r.execute(run1, "Trainer", {"examples": imported,
                                       "transform_graph": transform["transform_graph"]},
                     {"model": r.artifact("Model", "Trainer/1", 50)})["model"]
  version1 = os.path.join(serving_dir, "1")
  r.execute(run1, "Pusher", {"model": model1}, {"pushed_model": r.artifact(
      "PushedModel", "Pusher/1", 5, pushed_destination=version1)})
  os.makedirs(version1)
  open(os.path.join(version1, "saved_model.pb"), "w").close()
  a.update(imported1=imported, graph1=transform["transform_graph"],
           transformed1=transform["transformed_examples"], model1=model1)

  a["examples2"] = r.execute(run2, "ImportExampleGen", {}, {"examples": r.artifact(
      "Examples", "ImportExampleGen/2", 200, '["train_span2", "eval_span2"]')})["examples"]
  a["schema2"] = r.execute(run2, "ImportSchemaGen", {}, {"schema": r.artifact(
      "Schema", str(tmp_path / "user" / "schema"), 3)})["schema"]
  a["model2"] = r.execute(run2, "Trainer", {"examples": a["examples2"]}, {
      "model": r.artifact("Model", "Trainer/2", 60)})["model"]

  a["examples3"] = r.execute(run3, "ImportExampleGen", {}, {"examples": r.artifact(
      "Examples", "ImportExampleGen/3", 300, '["train_span3", "eval_span3"]')})["examples"]
  a["model3"] = r.execute(run3, "Trainer", {"examples": a["examples3"],
                                            "transform_graph": a["graph1"]},
                          {"model": r.artifact("Model", "Trainer/3", 70)})["model"]
  for span in (1, 2, 3):
    entry = os.path.join(root, "analyzer_cache", PIPELINE, f"train_span{span}")
    os.makedirs(entry)
    with open(os.path.join(entry, "cache"), "wb") as f:
      f.write(b"c" * span)
  return r.store, root, serving_dir, a


def test_retention_plans_to_delete_only_what_no_kept_run_and_no_served_version_needs(history):
  store, root, serving_dir, a = history
  found = planning.plan(store, PIPELINE, 1, root, serving_dir)
  assert (found.kept_runs, found.older_runs, found.versions) == (["run-3"], ["run-1", "run-2"],
                                                                  ["1"])
  assert found.kept_spans == ["eval_span3", "train_span3"]
  doomed = sorted((d.what, os.path.relpath(d.uri, root), d.bytes, d.run) for d in found.doomed)
  assert doomed == [
      ("ImportExampleGen examples", "ImportExampleGen/2", 200, "run-2"),
      ("StatisticsGen statistics", "StatisticsGen/1", 7, "run-1"),
      ("Trainer model", "Trainer/2", 60, "run-2"),
      ("analyzer cache train_span1", f"analyzer_cache/{PIPELINE}/train_span1", 1, ""),
      ("analyzer cache train_span2", f"analyzer_cache/{PIPELINE}/train_span2", 2, ""),
  ]
  assert found.total_bytes == 270
  assert found.skipped_outside == 1  # the user's own schema, imported by run 2


def test_a_served_version_keeps_its_pusher_its_model_and_what_made_them(history):
  store, _, serving_dir, a = history
  needed = planning.lineage(store, [os.path.join(serving_dir, "1")])
  for kept in ("model1", "imported1", "graph1", "transformed1"):
    assert a[kept].id in needed, kept
  # Statistics of the version's examples are no step of its making.
  assert a["stats1"].id not in needed
  assert planning.lineage(store, [os.path.join(serving_dir, "2")]) == set()


def test_keeping_no_run_still_keeps_the_served_versions(history):
  store, root, serving_dir, a = history
  found = planning.plan(store, PIPELINE, 0, root, serving_dir)
  assert found.kept_runs == [] and found.kept_spans == []
  doomed_ids = {d.artifact_id for d in found.doomed}
  assert {a["model3"].id, a["examples3"].id, a["model2"].id} <= doomed_ids
  assert not doomed_ids & {a["model1"].id, a["graph1"].id, a["imported1"].id}


def test_carrying_out_marks_deleted_first_then_removes_the_files(history):
  store, root, serving_dir, a = history
  found = planning.plan(store, PIPELINE, 1, root, serving_dir)
  planning.carry_out(store, found.doomed)
  for d in found.doomed:
    assert not os.path.exists(d.uri), d.uri
  states = {x.id: x.state for x in store.get_artifacts_by_id(
      [x.id for x in a.values()])}
  assert states[a["model2"].id] == states[a["examples2"].id] == pb.Artifact.DELETED
  for kept in ("model1", "model3", "examples3", "imported1", "schema2"):
    assert states[a[kept].id] == pb.Artifact.LIVE, kept
    assert os.path.exists(a[kept].uri), kept
  assert os.path.isdir(os.path.join(root, "analyzer_cache", PIPELINE, "train_span3"))
  # Planned again, nothing is left to delete.
  assert planning.plan(store, PIPELINE, 1, root, serving_dir).doomed == []
