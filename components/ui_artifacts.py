"""What the Kubeflow and Vertex AI run pages draw: artifacts of the four
types their viewers render, in the shapes they read.

The KFP v2 frontend (`frontend/src/components/viewers/MetricsVisualizations.tsx`,
2.5 to 2.17) draws an output artifact only if its ML Metadata type is one
of these, and only if it has a `display_name` (the backend adds one to
every artifact it records: the output's key):
- `system.Metrics`: every custom property, as a name/value table;
- `system.ClassificationMetrics`: `confusionMatrix`, read as
  `.struct` = {annotationSpecs: [{displayName}], rows: [{row: [...]}]}, one
  row per true class; and `confidenceMetrics`, read as `.list` =
  [{confidenceThreshold, falsePositiveRate, recall}] for the ROC curve. The
  `.struct`/`.list` wrappers are the backend's (`metadata/converter.go`
  StructValueToMLMDValue): the step writes the plain value;
- `system.HTML` and `system.Markdown`: the file at the artifact's URI.

The type names reach the backend because TFX's compiler puts a custom
type's TYPE_NAME into its schema's title when it has the form
`namespace.Title` (`compiler_utils.get_artifact_schema`), and the backend
records the title as the type (`metadata/client.go` SchemaToArtifactType).
At run time TFX's entrypoint imports the title as a class path;
kubeflow/steps/entrypoint.py gives it `CLASS_PATHS` instead.
"""

from typing import Dict, List, Optional, Sequence

from tfx.types import artifact, value_artifact


class Metrics(artifact.Artifact):
  """Scalar metrics, one custom property each."""
  TYPE_NAME = "system.Metrics"


class ClassificationMetrics(artifact.Artifact):
  """A confusion matrix, and for two classes the ROC curve's points."""
  TYPE_NAME = "system.ClassificationMetrics"


class _Text(value_artifact.ValueArtifact):
  """A UTF-8 text file at the artifact's URI (not a folder: the frontend
  reads the URI itself)."""

  def encode(self, value: str) -> bytes:
    return value.encode("utf-8")

  def decode(self, serialized_value: bytes) -> str:
    return serialized_value.decode("utf-8")


class Markdown(_Text):
  TYPE_NAME = "system.Markdown"


class HTML(_Text):
  TYPE_NAME = "system.HTML"


CLASS_PATHS = {cls.TYPE_NAME: f"{__name__}.{cls.__name__}"
               for cls in (Metrics, ClassificationMetrics, Markdown, HTML)}


def scalar_metrics(found: dict, judged: dict, blessed: bool) -> Dict[str, float]:
  """name -> value for `system.Metrics`: the candidate's metrics on the
  whole, the served model's and the change with its 95% interval, and each
  declared slice's judged metric, examples and verdict (1 passes), and
  whether the model was blessed (1) or not (0).

  `found` is components/evaluator/evaluation.load's; `judged` the Evaluator's judgement.
  """
  whole = found.get((), {})
  out = {name: value for name, value in whole.get("candidate", {}).items()}
  out.update({f"{name} (served)": v for name, v in whole.get("baseline", {}).items()})
  metric = judged.get("metric", "")
  for key in ("change", "change_low", "change_high"):
    if judged.get(key) is not None:
      out[f"{metric} {key.replace('_', ' ')}"] = judged[key]
  for row in judged.get("slices", []):
    name = row["slice"]
    if row["value"] is not None:
      out[f"{name}: {metric}"] = row["value"]
    if row["served"] is not None:
      out[f"{name}: {metric} (served)"] = row["served"]
    out[f"{name}: examples"] = row["examples"]
    out[f"{name}: passes"] = 0 if row["failure"] else 1
  out["model blessed"] = int(blessed)
  return {name: float(value) for name, value in out.items() if value is not None}


def confusion_matrix(counts: Dict[tuple, float], classes: Sequence[str]) -> dict:
  """`confusionMatrix`: rows by true class, columns by predicted class, in
  class-id order. `counts` is (true id, predicted id) -> examples."""
  n = len(classes)
  return {"annotationSpecs": [{"displayName": name} for name in classes],
          "rows": [{"row": [float(counts.get((true, predicted), 0.0)) for predicted in range(n)]}
                   for true in range(n)]}


def roc_points(thresholds: List[dict]) -> Optional[List[dict]]:
  """`confidenceMetrics` from TFMA's binary confusion matrices at thresholds
  (each with its threshold and counts tp, fp, tn, fn); None without any."""
  points = []
  for at in thresholds:
    positives, negatives = at["tp"] + at["fn"], at["fp"] + at["tn"]
    points.append({"confidenceThreshold": float(at["threshold"]),
                   "recall": at["tp"] / positives if positives else 0.0,
                   "falsePositiveRate": at["fp"] / negatives if negatives else 0.0})
  return points or None
