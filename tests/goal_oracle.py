"""Running OpenSim's side of a check (tests/oracle/moco_goals.py) in its own process."""
import functools
import json
import os
import subprocess
import sys

import pytest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle", "moco_goals.py")


@functools.lru_cache(maxsize=1)
def opensim_importable() -> bool:
    """OpenSim cannot be imported beside casadi, so this asks a fresh interpreter."""
    return subprocess.run([sys.executable, "-c", "import opensim"], capture_output=True).returncode == 0


def moco(request: dict, tmp_path) -> dict:
    """OpenSim's answer to ``request``; the test is skipped when ``opensim`` cannot be imported."""
    if not opensim_importable():
        pytest.skip("opensim cannot be imported (pip install '.[opensim]')")
    src, out = tmp_path / "request.json", tmp_path / "answer.json"
    src.write_text(json.dumps(request))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, SCRIPT, str(src), str(out)], capture_output=True, text=True, env=env,
                         cwd=str(tmp_path), timeout=300)
    assert run.returncode == 0, (run.stdout[-1500:] + run.stderr[-1500:])
    return json.loads(out.read_text())
