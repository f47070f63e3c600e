"""store/report/serving.py: the report's serving-check section says whether
the model passed, each check, and the latency figures; a failure says why,
as text."""

from store.report import serving

PASSED = {"checked": True, "passed": True, "examples": 64, "reason": "",
          "checks": [{"name": "loads", "ok": True, "detail": "in 1.2 s"},
                     {"name": "serving_default", "ok": True, "detail": "<json> answers"}],
          "latency_ms": {"batch_1": {"p50": 1.234, "p99": 5.0, "requests": 200},
                         "batch_64": {"p50": 12.5, "p99": 20.019, "requests": 20}}}


def test_a_passed_check_lists_each_check_and_the_latency_per_batch():
  parts = serving.section_parts(PASSED)
  assert parts[0] == ('<p class="ok">Passed: the model loads in a fresh process and serves '
                      '64 eval examples as its signature promises.</p>')
  assert "<tr><td>serving_default</td><td>ok</td><td>&lt;json&gt; answers</td></tr>" in parts[1]
  assert parts[2].startswith("<h3>Latency of serving_examples (milliseconds)</h3>")
  assert ('<tr><td class="num">1</td><td class="num">1.23</td><td class="num">5.00</td>'
          '<td class="num">200</td></tr>') in parts[2]
  assert '<td class="num">64</td><td class="num">12.50</td><td class="num">20.02</td>' in parts[2]


def test_a_failed_check_says_the_model_was_not_pushed_and_why():
  failed = {**PASSED, "passed": False, "reason": "latency <p99> 900 ms over 500",
            "checks": [{"name": "latency", "ok": False, "detail": "900 ms"}], "latency_ms": {}}
  parts = serving.section_parts(failed)
  assert parts == ['<p class="bad">FAILED, so the model was not pushed: latency &lt;p99&gt; '
                   '900 ms over 500</p>',
                   parts[1]]
  assert "<td>latency</td><td>FAILED</td><td>900 ms</td>" in parts[1]


def test_a_check_that_did_not_run_says_so():
  assert serving.section_parts(None) == [
      '<p class="note">The serving check did not run in this run.</p>']
  assert serving.section_parts({"checked": False, "reason": "no model was blessed"}) == [
      '<p class="note">No model was blessed.</p>']
