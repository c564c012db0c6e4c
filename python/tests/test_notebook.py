import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def test_local_notebook_in_a_kernel_with_the_stub(stub):
    """The local notebook in a real Jupyter kernel (the live view, a task's traceback in the cell),
    the stub standing in for the binary; the Go end-to-end tests run it with the real one."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", "notebooks", "run.py"),
         os.path.join(ROOT, "examples", "notebooks", "local.ipynb")],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "local.ipynb: ok" in out.stdout
