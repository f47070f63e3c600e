"""The report's images of an image dataset: a few eval images of each class,
and those the candidate got most confidently wrong, each with its true and
predicted class (components/evaluator/image_samples.py picks them, in the Evaluator)."""

import base64
from typing import List, Optional

from store.report.html import Raw, esc, png, table


def parts(samples: Optional[dict]) -> List[str]:
  """The evaluation section's image parts; none for data without images."""
  if not samples or not samples.get("examples"):
    return []
  rows = [[group["class"], Raw("".join(_img(i, f"class {group['class']}")
                                       for i in group["images"]))]
          for group in samples["per_class"]]
  out = [f"<h3>Eval images ({esc(samples['feature'])})</h3>"
         + table(["class", "a few of its eval images"], rows)]
  wrong = samples["wrong"]
  out.append(f"<h3>Most confidently wrong, of {samples['examples']} eval images</h3>")
  if not wrong:
    return out + ['<p class="note">The candidate answered every one of them right.</p>']
  figures = "".join(
      "<figure>" + _img(w["image"], f"true {w['true']}, predicted {w['predicted']}")
      + f"<figcaption>true {esc(w['true'])}<br>predicted {esc(w['predicted'])} "
      f"({w['confidence']:.2f})</figcaption></figure>" for w in wrong)
  return out + [f'<div class="thumbs">{figures}</div>']


def _img(data: str, alt: str) -> str:
  return png(base64.b64decode(data), alt)
