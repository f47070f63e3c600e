"""What every benchmark ends with: its results as JSON, and its chart."""

import json
from typing import Callable, Optional


def save(results: dict, json_path: Optional[str], plot_path: Optional[str],
         plot: Callable[[dict, str], None]) -> None:
  """Writes `results` to json_path and `plot(results, plot_path)`, each if
  asked for, and says where."""
  if json_path:
    with open(json_path, "w") as f:
      json.dump(results, f, indent=1)
    print(f"json: {json_path}")
  if plot_path:
    plot(results, plot_path)
    print(f"plot: {plot_path}")
