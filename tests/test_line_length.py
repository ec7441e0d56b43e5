"""Every line of the project's Python is at most 100 characters (the house style): wrap, don't
rename. The one line that cannot be wrapped is a `def` whose name alone passes the limit (a test
named as a sentence); it is allowed, nothing else is."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("reviewapp", "judges", "tests", "bench")
LIMIT = 100
UNWRAPPABLE = re.compile(r"^\s*(async\s+)?def \w+\((\):)?$")


def _too_long(path: Path) -> list[str]:
    return [f"{path.relative_to(ROOT)}:{number}: {len(line)} characters"
            for number, line in enumerate(path.read_text().splitlines(), 1)
            if len(line) > LIMIT and not UNWRAPPABLE.match(line)]


def test_no_line_of_python_is_over_100_characters():
    found = [hit for folder in FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))
             for hit in _too_long(path)]
    assert not found, f"{len(found)} lines over {LIMIT} characters:\n" + "\n".join(found[:50])


def test_the_check_sees_a_long_line_and_lets_only_a_long_test_name_pass(tmp_path, monkeypatch):
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    sample = tmp_path / "sample.py"
    name = "test_" + "a_very_long_name_" * 6
    sample.write_text(f"def {name}():\n    pass\nx = {'1 + ' * 40}1\n")
    assert _too_long(sample) == [f"sample.py:3: {len('x = ' + '1 + ' * 40 + '1')} characters"]
