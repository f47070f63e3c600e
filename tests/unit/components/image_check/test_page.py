"""The image check's HTML (components/image_check/page.py): each kind with
its count and decision, its examples as thumbnails side by side with
split, file and record index, each split's classes as bars; the same as a
page of its own for the run page."""

from components.image_check.page import page, section_parts

THUMB = "data:image/png;base64,iVBORw0KGgo="
RESULT = {
    "images": {"train": 30, "eval": 10}, "files": 4, "reused": 2,
    "classes": {"train": {"0": 28, "1": 2}, "eval": {"0": 9, "1": 1}},
    "findings": [
        {"kind": "leak", "decision": "stop", "count": 1, "line": "", "note": "",
         "describes": "eval images that repeat a train image",
         "examples": [[{"split": "eval", "file": "/r/Split-eval/data-0.gz", "index": 4,
                        "label": "0", "size": "96x96", "thumb": THUMB, "more": 0},
                       {"split": "train", "file": "/r/Split-train/data-0.gz", "index": 9,
                        "label": "0", "size": "96x96", "thumb": THUMB, "more": 3}]]},
        {"kind": "minority_class", "decision": "warn", "count": 1, "line": "", "note": "",
         "describes": "classes under a fifth",
         "examples": [{"split": "train", "label": "1", "count": 2}]}]}


def test_each_kind_its_examples_side_by_side_and_the_classes():
  html = "\n".join(section_parts(RESULT, ran=True))
  assert "40 images checked" in html and "the fingerprints of 2 of 4 files reused" in html, html
  assert '<span class="bad">stop</span>' in html, html
  assert html.count(f'src="{THUMB}"') == 2, html
  assert "eval · data-0.gz #4" in html and "train · data-0.gz #9" in html, html
  assert "and 3 more" in html, html
  assert "train: class 1, 2 images" in html, html
  assert html.count('class="bar"') == 4 and "93.3%" in html, html


def test_a_run_without_the_step_or_its_result_says_so():
  assert "declares no image feature" in section_parts(None, ran=False)[0]
  assert "did not finish" in section_parts({}, ran=True)[0]


def test_the_step_page_is_a_whole_document_with_the_same_section():
  text = page(RESULT)
  assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>"), text[:80]
  assert "\n".join(section_parts(RESULT, ran=True)) in text
