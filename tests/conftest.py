"""Shared fixtures: synthetic records, declarations, and the bundled digits."""

import copy
import os

import pytest
import yaml

from runtime import startup

startup.start()  # the Keras choice, before TF loads Keras: as every entry point

# isort: split
from dataset import declaration
from dataset.convert import digits
from dataset.convert.rows import write_rows

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIGITS_YAML = os.path.join(REPO, "dataset", "examples", "digits.yaml")
DIGITS_SCHEMA = os.path.join(REPO, "dataset", "examples", "digits.pbtxt")


def digits_raw() -> dict:
  """The digits declaration as a YAML document, to copy and modify."""
  with open(DIGITS_YAML) as f:
    return yaml.safe_load(f)


def write_declaration(folder, raw: dict, name: str = "dataset.yaml") -> str:
  path = os.path.join(str(folder), name)
  with open(path, "w") as f:
    yaml.safe_dump(raw, f)
  return path


def digit_rows(count: int, start: int = 0) -> list:
  """Feature dicts of real digits, as the bundled writer makes them."""
  images, labels = digits.load_images()
  return [digits.digit_features(images[i], labels[i])
          for i in range(start, start + count)]


def digits_dataset(folder, rows: list, pattern_layout: bool = True,
                   schema: bool = True) -> str:
  """Writes rows as GZIP records under folder/data and a declaration for them.

  Returns:
    The declaration's path.
  """
  data = os.path.join(str(folder), "data")
  raw = copy.deepcopy(digits_raw())
  if pattern_layout:
    write_rows(rows, data, "digits")
    raw["data"] = {"root": data, "compression": "GZIP", "pattern": "*.gz",
                   "hash_buckets": {"train": 3, "eval": 1}}
  else:
    half = len(rows) * 3 // 4
    write_rows(rows[:half], os.path.join(data, "train"), "d")
    write_rows(rows[half:], os.path.join(data, "eval"), "d")
    raw["data"]["root"] = data
  if schema:
    raw["schema"] = DIGITS_SCHEMA
  else:
    raw.pop("schema")
  return write_declaration(folder, raw)


LONG_NOTE = ("the long runs (`-m long`: whole pipeline runs through a scenario, "
             "about 50 minutes) are not in this suite; .ci/run runs them after it")


def pytest_configure(config):
  """`pytest` alone runs the suite, within its 20 minutes: every test but
  the long runs (DEVELOPERS.md, "Two tiers"). Named files, or a `-m` of the
  user's own, run as asked, the long ones included. Each xdist worker
  parses the same command line, so it makes the same choice here."""
  if config.args_source == pytest.Config.ArgsSource.TESTPATHS and not config.option.markexpr:
    config.option.markexpr = "not long"


def pytest_report_header(config):
  return LONG_NOTE if config.option.markexpr == "not long" else None


def pytest_terminal_summary(terminalreporter, config):
  if config.option.markexpr == "not long":
    terminalreporter.write_line(LONG_NOTE)


def pytest_collection_modifyitems(items):
  """Test files that run pipelines go first, then those of tests/processes/
  and tests/integration/ (seconds a test), then tests/unit/, the most tests
  first within each kind (pyproject.toml turns off xdist's own reordering,
  which is by count alone). A worker takes one file at a time, so a long
  file started last keeps the other workers idle at the end: the measured
  suite ended a minute later than its summed time allowed, with the
  end-to-end files, few tests each, scheduled last. Only the order changes,
  never what runs."""
  files = {}
  for item in items:
    files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
  def cost(tests):
    slow = tests[0].nodeid.startswith(("tests/processes/", "tests/integration/"))
    return (not any(t.get_closest_marker("e2e") for t in tests), not slow, -len(tests))
  items[:] = [t for tests in sorted(files.values(), key=cost) for t in tests]


@pytest.fixture
def digits_decl(tmp_path) -> declaration.Declaration:
  """A declaration of 64 real digits in pre-split folders."""
  return declaration.load(digits_dataset(tmp_path, digit_rows(64),
                                         pattern_layout=False))


@pytest.fixture(scope="session")
def transformed(tmp_path_factory):
  """64 digits through the real preprocessing_fn with tft_beam.

  Returns a dict with: decl, rows (raw feature dicts), transform_dir (a
  TFTransformOutput folder), files (GZIP TFRecords of transformed Examples),
  and outputs (the transformed instances, in input order).
  """
  from tests.transform_helpers import analyze_and_transform
  folder = tmp_path_factory.mktemp("transformed")
  rows = digit_rows(64)
  decl = declaration.load(digits_dataset(folder, rows, pattern_layout=False))
  return analyze_and_transform(decl, rows, str(folder))


def compile_digits_spec(out, *extra) -> str:
  """`python -m commands.kubeflow compile` of the digits onto gs:// paths (unless
  `extra` flags say otherwise); the spec's path."""
  from commands.kubeflow.cli import main as kubeflow
  assert kubeflow(["compile", "--image", "r/i:1", "--pipeline-root", "gs://b/p",
                   "--data-root", "gs://b/d", "--skip-data-check",
                   "--output-dir", str(out), *extra]) == 0
  return str(out / "pipeline.yaml")


def build_pipeline(config):
  """The pipeline a local run of `config` builds, with its inputs resolved
  first, as local_runner.py does."""
  from pipeline.inputs import resolve_inputs
  from pipeline.pipeline import create_pipeline
  return create_pipeline(config, resolve_inputs(config))


def span_data(root: str, window: int) -> dict:
  """A declaration's `data:` over `span-N/{train,eval}` folders under root."""
  return {"root": str(root), "window": window,
          "splits": {"train": "span-{SPAN}/train/*.tfrecord.gz",
                     "eval": "span-{SPAN}/eval/*.tfrecord.gz"}}


def span_pipeline(tmp_path, name: str, window: int) -> tuple:
  """(the digits declaration as a document, named `name`, over spans under
  tmp_path/data with this window; the data folder; the output folder)."""
  data, out = str(tmp_path / "data"), str(tmp_path / "out")
  raw = copy.deepcopy(digits_raw())
  raw["name"] = name
  raw["data"] = span_data(data, window)
  return raw, data, out


def span_declaration(tmp_path, spans=(1, 2, 3), window=2):
  """The digits declaration over span folders (empty files: compiling reads
  only the folder names)."""
  root = tmp_path / "data"
  for span in spans:
    for split in ("train", "eval"):
      (root / f"span-{span}" / split).mkdir(parents=True, exist_ok=True)
      (root / f"span-{span}" / split / "part-0.tfrecord.gz").write_bytes(b"")
  with open(DIGITS_YAML) as f:
    raw = yaml.safe_load(f)
  raw["data"] = span_data(str(root), window)
  raw["schema"] = os.path.join(REPO, "dataset", "examples", "digits.pbtxt")
  path = tmp_path / "spans.yaml"
  path.write_text(yaml.safe_dump(raw))
  return path, root


def model_dir(folder, blocking=False):
  """A stand-in SavedModel folder for the serving dir's tests."""
  os.makedirs(os.path.join(folder, "variables"))
  with open(os.path.join(folder, "saved_model.pb"), "wb") as f:
    f.write(b"model")
  if blocking:
    # Reading a FIFO with no writer waits forever: the copy stops right there,
    # half done, as a push interrupted by a crash or a preempted node would.
    os.mkfifo(os.path.join(folder, "variables", "variables.data-00000-of-00001"))
  return folder


@pytest.fixture(scope="module", params=["GZIP", "NONE"])
def written(request, tmp_path_factory):
  """40 digits written by convert, and the record bytes as written.

  The encoder orders a record's features freely, so the exact bytes are
  taken from the file by this project's reader; TensorFlow and an
  independent reader must return the same bytes, and the records must hold
  the rows' values.
  """
  from dataset.convert.rows import write_rows
  from dataset.records import format as tfrecord_format
  rows = digit_rows(40)
  out = tmp_path_factory.mktemp("w") / "out"
  result = write_rows(rows, str(out), "d", compression=request.param)
  records = [r for path in result.files[""] for r in tfrecord_format.read_records(path)]
  return {"rows": rows, "records": records, "files": result.files[""],
          "compression": request.param}
