"""Figures quoted in the README and the guide cannot drift from the records they were copied from.

A block of a page that quotes measured figures is marked with the record it comes from: in
reStructuredText the comment ``.. figures from docs/benchmarks/NAME.txt``, in the README the
HTML comment ``<!-- figures from docs/benchmarks/NAME.txt -->``.  The block is the first
paragraph or table after the marker (up to the next blank line or Markdown list item).  Every decimal figure in it
(``0.755``, ``−1.20``, ``+0.097``) must be, to the digits it shows, a figure of that record:
rerun a benchmark and its record changes, and the page fails here until it quotes the new
numbers.  Integers (sizes, counts) are not checked, and a figure is matched against every
figure of its record: a quoted number that drifts onto another figure of the same record (the
README's 0.76 turned 0.78 matches the record's 0.775) is not caught — keep records small.

The README's "A taste" example is run, and each value its comments state (``# (0.005, 0.005,
1)``) is compared with what the code returns.
"""
from __future__ import annotations

import ast
import re
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if not ((ROOT / "README.md").is_file() and (ROOT / "docs" / "benchmarks").is_dir()):
    pytest.skip("the README and documentation sources are not in this tree (an installed wheel)",
                allow_module_level=True)
PAGES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.rst"))]
MARKER = re.compile(r"^\s*(?:\.\.|<!--) figures from (docs/benchmarks/\S+\.txt)(?: -->)?\s*$")
#: a decimal figure: digits, a point, digits; a sign (ASCII or the typographic minus) kept
DECIMAL = re.compile(r"(?<![\w.])([−+-]?)(\d+\.\d+)(?![\w.]|\.\d)")

def decimals(text):
    """The decimal figures of ``text`` as Decimals (the typographic minus read as '-')."""
    return [Decimal(("-" if s in "−-" and s else "") + d) for s, d in DECIMAL.findall(text)]


def marked_blocks(page):
    """``(line, record, block)`` for every marker of ``page``."""
    lines = (ROOT / page).read_text().splitlines()
    out = []
    for i, line in enumerate(lines):
        m = MARKER.match(line)
        if not m:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        k = j + 1            # to a blank line or the next item of a Markdown list
        while k < len(lines) and lines[k].strip() and not re.match(r"\s*[-*] ", lines[k]):
            k += 1
        out.append((i + 1, m.group(1), "\n".join(lines[j:k])))
    return out


def shown_as(value, quoted):
    """``value`` rounded to the digits of ``quoted`` (half up or half even) equals it."""
    exp = quoted.as_tuple().exponent
    if value.as_tuple().exponent > exp:          # the record has fewer digits than the page
        return False
    q = Decimal(1).scaleb(exp)
    return any(value.quantize(q, rounding=r) == quoted for r in (ROUND_HALF_UP, ROUND_HALF_EVEN))


def missing_figures(block, record_text):
    """The figures of ``block`` that no figure of the record shows."""
    have = decimals(record_text)
    return [str(q) for q in decimals(block) if not any(shown_as(v, q) for v in have)]


BLOCKS = [(page, *b) for page in PAGES for b in marked_blocks(page)]


def test_the_pages_mark_their_figures():
    # the marked blocks this test guards (a marker removed by mistake fails here)
    marked = {(page, record) for page, _, record, _ in BLOCKS}
    for expected in [("README.md", "docs/benchmarks/effect_coverage_augmented.txt"),
                     ("docs/guide/balance.rst", "docs/benchmarks/effect_coverage_augmented.txt"),
                     ("docs/guide/dependence.rst", "docs/benchmarks/projection_independence_level.txt"),
                     ("docs/guide/dependence.rst", "docs/benchmarks/projection_independence_power.txt"),
                     ("docs/guide/testing.rst", "docs/benchmarks/projection_tests_power.txt")]:
        assert expected in marked, f"no figures marker for {expected}"


@pytest.mark.parametrize("page, line, record, block", BLOCKS,
                         ids=[f"{p}:{line}" for p, line, _, _ in BLOCKS])
def test_every_marked_figure_is_in_its_record(page, line, record, block):
    path = ROOT / record
    assert path.is_file(), f"{page}:{line} names a record that does not exist: {record}"
    assert decimals(block), f"{page}:{line}: the marked block quotes no decimal figure"
    missing = missing_figures(block, path.read_text())
    assert not missing, (f"{page}:{line}: figures not in {record} (rerun? then quote the new "
                         f"figures): {missing}")


def test_a_drifted_figure_is_caught():
    record = "coverage 0.755 ± 0.030, bias -1.196 ± 0.053, mean SE / MC SD 0.845 / 0.754 = 1.12"
    assert missing_figures("0.755 ± 0.030  −1.20  1.12", record) == []
    assert missing_figures("0.755 ± 0.030  −1.19  1.12", record) == ["-1.19"]
    assert missing_figures("0.76 ± 0.03", record) == []            # fewer digits: rounded
    assert missing_figures("0.7550", record) == ["0.7550"]          # more digits than recorded
    assert missing_figures("+1.196", record) == ["1.196"]           # the sign counts


# -- the README's example ------------------------------------------------------------------------

def _taste():
    text = (ROOT / "README.md").read_text()
    start = text.index("## A taste")
    block = text[text.index("```python", start) + len("```python"):]
    return block[:block.index("```")]


def test_the_readme_example_prints_what_its_comments_say():
    namespace, checked = {}, 0
    for line in _taste().splitlines():
        code, _, comment = line.partition("  # ")
        exec(code, namespace)                    # noqa: S102 - the README's own example
        literal = re.match(r"\s*([(\d][^:]*?)(?::|$)", comment)
        if not (comment and literal):
            continue
        try:
            expected = ast.literal_eval(literal.group(1).strip())
        except (ValueError, SyntaxError):
            continue
        assert eval(code, namespace) == expected, (code, expected)  # noqa: S307
        checked += 1
    assert checked >= 2          # the test's p-value line and the clustering check's
