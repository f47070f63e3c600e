"""The serving dir (serving/): which versions count, atomic pushes, and what a version records."""

import os

import serving
from serving import latest, push
from tests.conftest import model_dir


def test_the_newest_complete_numbered_folder_is_the_served_version(tmp_path):
  base = tmp_path / "serving"
  assert latest(str(base)) is None
  for version, complete in (("100", True), ("300", False), ("200", True),
                            (".tmp-400-abc", True)):
    (base / version).mkdir(parents=True)
    if complete:
      (base / version / "saved_model.pb").write_bytes(b"x")
  # 300 has no saved_model.pb (a push cut short); .tmp-400 is not a version.
  assert serving.versions(str(base)) == [str(base / "200"), str(base / "100")]
  assert latest(str(base)) == str(base / "200")
  assert serving.baseline_version(str(base), "") == "200"
  assert serving.baseline_version(str(tmp_path / "empty"), "") == serving.NONE


def test_a_version_trained_with_this_runs_key_is_not_its_baseline(tmp_path):
  base = tmp_path / "serving"
  for version, key in (("100", "k-old"), ("200", "k-this-run")):
    model_dir(str(base / version))
    serving.record(str(base / version), ["train_span1"], key)
  assert serving.recorded_key(str(base / "200")) == "k-this-run"
  assert serving.trained_on(str(base / "100")) == ["train_span1"]
  assert serving.baseline_version(str(base), "k-this-run") == "100"
  assert serving.baseline_version(str(base), "k-new-data") == "200"


def test_an_interrupted_push_is_never_taken_for_a_pushed_copy(tmp_path):
  # A killed push leaves a temporary folder whose fingerprint.pb may be
  # copied before its variables; a retry must push again, not record it.
  model = model_dir(str(tmp_path / "model"))
  with open(os.path.join(model, "fingerprint.pb"), "wb") as f:
    f.write(b"fp-1")
  base = tmp_path / "serving"
  half = base / ".tmp-500-deadbeef"
  half.mkdir(parents=True)
  (half / "fingerprint.pb").write_bytes(b"fp-1")
  assert serving.find_copy(model, str(base)) is None
  pushed = push(model, str(base))
  assert serving.find_copy(model, str(base)) == pushed


