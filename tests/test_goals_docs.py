"""The code blocks of docs/goals.md run as written (from the repository's root, where its data paths point)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_goals_page_examples_run(monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "goals.md").read_text(), re.S)
    assert blocks
    monkeypatch.chdir(ROOT)
    for code in blocks:
        namespace = {}
        exec(compile(code, "docs/goals.md", "exec"), namespace)
        assert namespace["result"].success
