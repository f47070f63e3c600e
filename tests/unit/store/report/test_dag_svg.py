"""The report's DAG picture (store/report/dag.py `svg`): a box per component
where the layout puts it, coloured and labelled by its state and time, an
arrow per edge, names escaped; parsed as the browser would (XML)."""

import xml.etree.ElementTree as ET

from store.report import dag

NS = {"s": "http://www.w3.org/2000/svg"}
# A diamond, and a component whose name would break the page unescaped.
UPSTREAM = {"ImportExampleGen": [], "StatisticsGen": ["ImportExampleGen"],
            "Transform": ["ImportExampleGen"], "Trainer": ["StatisticsGen", "Transform"],
            "<b>Pusher&Co</b>": ["Trainer"]}


def _boxes(picture: str) -> dict:
  root = ET.fromstring(picture)
  boxes = {}
  for group in root.findall("s:g", NS):
    rect = group.find("s:rect", NS)
    name, detail = (t.text for t in group.findall("s:text", NS))
    boxes[group.get("data-node")] = {
        "state": group.get("data-state"), "name": name, "detail": detail,
        "at": (float(rect.get("x")), float(rect.get("y"))), "fill": rect.get("fill")}
  return boxes


def test_each_component_is_a_box_where_the_layout_puts_it_with_its_state_and_time():
  picture = dag.svg(UPSTREAM, {"ImportExampleGen": "CACHED", "StatisticsGen": "COMPLETE",
                               "Transform": "COMPLETE", "Trainer": "FAILED"},
                    {"StatisticsGen": 3.04, "Transform": 61.25, "Trainer": None})
  boxes = _boxes(picture)
  assert list(boxes) == list(UPSTREAM)
  step_x, step_y = dag.BOX_W + dag.GAP_X, dag.BOX_H + dag.GAP_Y
  assert {n: b["at"] for n, b in boxes.items()} == {
      "ImportExampleGen": (10, 10), "StatisticsGen": (10, 10 + step_y),
      "Transform": (10 + step_x, 10 + step_y), "Trainer": (10, 10 + 2 * step_y),
      "<b>Pusher&Co</b>": (10, 10 + 3 * step_y)}
  assert {n: (b["state"], b["detail"]) for n, b in boxes.items()} == {
      "ImportExampleGen": ("CACHED", "CACHED"), "StatisticsGen": ("COMPLETE", "COMPLETE · 3.0s"),
      "Transform": ("COMPLETE", "COMPLETE · 61.2s"), "Trainer": ("FAILED", "FAILED"),
      "<b>Pusher&Co</b>": ("not run", "not run")}
  assert boxes["Trainer"]["fill"] == dag.COLOURS["FAILED"]
  assert boxes["<b>Pusher&Co</b>"]["fill"] == dag.COLOURS["not run"]
  assert boxes["<b>Pusher&Co</b>"]["name"] == "<b>Pusher&Co</b>"  # text, not markup
  assert "<b>" not in picture
  root = ET.fromstring(picture)
  assert (root.get("width"), root.get("height")) == (str(20 + 2 * step_x), str(20 + 4 * step_y))


def test_an_arrow_runs_from_each_parent_down_to_its_child():
  root = ET.fromstring(dag.svg(UPSTREAM, {}, {}))
  arrows = [p.get("d") for p in root.findall("s:path", NS)]
  assert len(arrows) == sum(len(parents) for parents in UPSTREAM.values()) == 5
  for path in arrows:
    start, end = path[1:].split(" C")[0], path.rsplit(" ", 1)[1]
    assert float(start.split(",")[1]) < float(end.split(",")[1]), path


def test_no_component_recorded_is_a_note_not_an_empty_picture():
  assert dag.svg({}, {}, {}) == '<p class="note">No components recorded.</p>'
