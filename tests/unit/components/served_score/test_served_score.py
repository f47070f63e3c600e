"""The served model scored on the newest span, both its splits, with TFMA
for real on a real SavedModel (tests/unit/components/evaluator/
test_evaluator.py's), recorded beside the serving dir's versions; the line
when it fell below its threshold."""

import dataclasses
import os
import shutil

from tfx.types import standard_artifacts
from tfx.utils import proto_utils

from components.evaluator.eval_config import eval_config
from components.served_score import score, served_score
from dataset.types import Label
from tests.conftest import digits_decl  # noqa: F401  (a fixture)
from tests.unit.components.evaluator.test_evaluator import CLASSES, examples, save_model
from trainer import warm_start


def test_the_served_model_is_scored_on_the_newest_span_and_recorded(tmp_path,
                                                                     digits_decl):  # noqa: F811
  decl = dataclasses.replace(digits_decl, label=Label("label", CLASSES))
  decl = dataclasses.replace(decl, evaluation=dataclasses.replace(decl.evaluation,
                                                                  threshold=0.95))
  served = standard_artifacts.Model()
  served.uri = str(tmp_path / "baseline")
  save_model(served.uri, ("serving_default",))  # pushed before serving_examples
  with open(os.path.join(served.uri, warm_start.SOURCE), "w") as f:
    f.write("/serving/1700000000")
  data = examples(str(tmp_path / "examples"))  # 300 examples in Split-eval
  for split in ("train_span1", "train_span2"):
    shutil.copytree(os.path.join(data.uri, "Split-eval"), os.path.join(data.uri, f"Split-{split}"))
  os.rename(os.path.join(data.uri, "Split-eval"), os.path.join(data.uri, "Split-eval_span2"))
  data.split_names = '["train_span1", "train_span2", "eval_span2"]'
  record = served_score.score_served(
      data, served, proto_utils.proto_to_json(eval_config(decl, decl.evaluation)),
      decl.evaluation, str(tmp_path / "serving"))
  assert (record["version"], record["metric"], record["count"]) == ("1700000000", "accuracy",
                                                                    600), record
  assert abs(record["value"] - 0.9) < 0.02 and record["low"] < record["value"] < record["high"]
  assert score.history(str(tmp_path / "serving")) == [record]
  line = score.verdict(record, blessed_value=0.93)
  assert line.startswith("served model (version 1700000000) on span 2: accuracy 0.9") \
      and line.endswith("past its threshold 0.95"), line


def test_newest_span_splits():
  names = ["train_span1", "eval_span1", "train_span2", "eval_span2"]
  assert score.newest_span_splits(names) == ["eval_span2", "train_span2"]
  assert score.newest_span_splits(["train", "eval"]) == ["eval"]
