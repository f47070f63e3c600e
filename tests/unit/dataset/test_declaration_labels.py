"""Each label kind as declared: class ids, class names (strings), and
regression; their defaults, what is refused, and the record check of class
names. Trained and served: tests/integration/trainer/test_export.py."""

import copy

import pytest
import tensorflow as tf

from dataset import check, declaration
from dataset.convert.rows import serialize
from dataset.training import TrainingConfig
from tests.conftest import digit_rows, digits_raw, write_declaration

NAMES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
CONFIG = TrainingConfig(batch_size=16)


def raw_with(label: dict, evaluation: dict = None) -> dict:
  raw = copy.deepcopy(digits_raw())
  raw["label"] = label
  raw.pop("schema")
  if evaluation is not None:
    raw["evaluation"] = evaluation
  return raw


@pytest.mark.parametrize("label,evaluation,message", [
    ({"name": "label", "kind": "regression"}, None,
     "'evaluation.threshold': expected a number: the largest rmse a model may have"),
    ({"name": "label", "kind": "regression", "num_classes": 3}, {"threshold": 1},
     "'label.num_classes': expected nothing: a regression label has no classes"),
    ({"name": "label", "num_classes": 10}, {"metric": "auc"},
     "'evaluation.metric': expected accuracy: auc needs exactly 2 classes"),
    ({"name": "label", "num_classes": 10}, {"metric": "rmse"},
     "'evaluation.metric': expected one of accuracy, auc, found 'rmse'"),
    ({"name": "label", "classes": ["a", "a"]}, None,
     "'label.classes': expected distinct class names"),
    ({"name": "label", "kind": "regression"}, {"metric": "mae", "threshold": 1, "max_change": -1},
     "'evaluation.max_change': expected a number >= 0, found -1"),
])
def test_bad_label_or_evaluation_is_named(tmp_path, label, evaluation, message):
  with pytest.raises(declaration.DeclarationError, match=message.replace("(", r"\(")):
    declaration.load(write_declaration(tmp_path, raw_with(label, evaluation)))


def test_defaults_follow_the_label(tmp_path):
  classes = declaration.load(write_declaration(tmp_path, raw_with(
      {"name": "label", "classes": NAMES})))
  assert (classes.label.num_classes, classes.evaluation.metric,
          classes.evaluation.threshold, classes.evaluation.higher_is_better) == (
      10, "accuracy", 0.9, True)
  regression = declaration.load(write_declaration(tmp_path, raw_with(
      {"name": "label", "kind": "regression"}, {"threshold": 2.5})))
  assert (regression.evaluation.metric, regression.evaluation.threshold,
          regression.evaluation.higher_is_better) == ("rmse", 2.5, False)


def named_rows(n=80):
  rows = digit_rows(n)
  return [dict(r, label=[NAMES[r["label"][0]].encode()]) for r in rows]


def test_the_check_takes_declared_names_and_names_a_stray_one(tmp_path):
  decl = declaration.load(write_declaration(tmp_path, raw_with(
      {"name": "label", "classes": NAMES})))
  rows = named_rows(3)
  for i, record in enumerate(serialize(rows)):
    check.check_example(decl, tf.train.Example.FromString(record), f"record {i}")
  rows[2]["label"] = [b"eleven"]
  with pytest.raises(declaration.DeclarationError,
                     match=r"record 2: field 'label': expected one of the declared classes "
                           r"\['zero', .*'nine'\], found 'eleven'"):
    check.check_example(decl, tf.train.Example.FromString(serialize(rows)[2]), "record 2")
  regression = declaration.load(write_declaration(tmp_path, raw_with(
      {"name": "label", "kind": "regression"}, {"threshold": 1})))
  with pytest.raises(declaration.DeclarationError,
                     match=r"field 'label': expected one float value \(float_list\)"):
    check.check_example(regression, tf.train.Example.FromString(serialize(digit_rows(1))[0]),
                        "record 0")
