"""The served model scored on the newest span, both its splits, with TFMA
for real on a real SavedModel (tests/integration/components/evaluator/
test_evaluator.py's), recorded beside the serving dir's versions."""

import os
import shutil

from tfx.types import standard_artifacts
from tfx.utils import proto_utils

import serving
from components.evaluator.eval_config import eval_config
from components.served_score import score, served_score
from tests.conftest import digits_decl  # noqa: F401  (a fixture)
from tests.integration.components.evaluator.test_evaluator import examples, save_model
from tests.unit.components.served_score.test_served_score import _decl
from trainer import warm_start


def _served(tmp_path, versions=("1700000000",), trained_on=("train_span1",)):
  """BaselineModel's copy of the newest of `versions` in tmp_path/serving,
  trained on `trained_on`; the Examples of spans 1 and 2 (span 2 twice the
  300 examples of test_evaluator's)."""
  serving_dir = tmp_path / "serving"
  for version in versions:
    save_model(str(tmp_path / version), ("serving_default",))  # before serving_examples
    shutil.move(str(tmp_path / version / "Format-Serving"), str(serving_dir / version))
    serving.record(str(serving_dir / version), list(trained_on), "key")
  served = standard_artifacts.Model()
  served.uri = str(tmp_path / "baseline")
  shutil.copytree(serving_dir / versions[-1], os.path.join(served.uri, "Format-Serving"))
  with open(os.path.join(served.uri, warm_start.SOURCE), "w") as f:
    f.write(str(serving_dir / versions[-1]))
  data = examples(str(tmp_path / "examples"))  # 300 examples in Split-eval
  for split in ("train_span1", "train_span2"):
    shutil.copytree(os.path.join(data.uri, "Split-eval"), os.path.join(data.uri, f"Split-{split}"))
  os.rename(os.path.join(data.uri, "Split-eval"), os.path.join(data.uri, "Split-eval_span2"))
  data.split_names = '["train_span1", "train_span2", "eval_span2"]'
  return served, data, str(serving_dir)


def _score(decl, served, data, serving_dir):
  return served_score.score_served(
      data, served, proto_utils.proto_to_json(eval_config(decl, decl.evaluation)),
      decl.evaluation, serving_dir)


def test_the_served_model_is_scored_on_the_newest_span_and_recorded(tmp_path,
                                                                     digits_decl):  # noqa: F811
  decl = _decl(digits_decl, threshold=0.95)
  record = _score(decl, *_served(tmp_path))
  assert (record["version"], record["metric"], record["count"]) == ("1700000000", "accuracy",
                                                                    600), record
  assert abs(record["value"] - 0.9) < 0.02 and record["low"] < record["value"] < record["high"]
  assert score.history(str(tmp_path / "serving")) == [record]
  line = score.verdict(record, {"metric": "accuracy", "value": 0.93})
  assert line.startswith("served model (version 1700000000) on span 2: accuracy 0.9") \
      and line.endswith("past its threshold 0.95"), line


def test_a_version_trained_on_the_span_or_not_the_newest_is_not_scored(tmp_path,
                                                                       digits_decl):  # noqa: F811
  decl = _decl(digits_decl)
  trained = _score(decl, *_served(tmp_path / "a", trained_on=("train_span1", "train_span2")))
  assert trained == {"note": "not scored: version 1700000000 was trained on span 2"}, trained
  served, data, serving_dir = _served(tmp_path / "b", versions=("1700000000", "1700000100"))
  with open(os.path.join(served.uri, warm_start.SOURCE), "w") as f:
    f.write(os.path.join(serving_dir, "1700000000"))  # a re-run beside its own push
  older = _score(decl, served, data, serving_dir)
  assert older["note"].startswith("not scored: version 1700000000 is not the newest"), older
  assert score.history(serving_dir) == []
