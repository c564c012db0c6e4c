# Written by tfyarn's launcher for --framework jax, first on the program's PYTHONPATH as
# sitecustomize: it lets jax.distributed.initialize() with no arguments find the process count
# and id tfyarn sets (JAX_NUM_PROCESSES, JAX_PROCESS_ID; JAX reads JAX_COORDINATOR_ADDRESS
# itself). It registers a cluster environment with JAX's own plugin mechanism (a subclass of
# jax._src.clusters.ClusterEnv registers itself) once JAX imports that module; nothing is
# imported before. Then the environment's own sitecustomize, if any, runs as usual.
import os
import sys


def _register(clusters):
    class TfyarnCluster(clusters.ClusterEnv):
        name = "tfyarn"

        @classmethod
        def is_env_present(cls):
            return "JAX_NUM_PROCESSES" in os.environ and "JAX_PROCESS_ID" in os.environ

        @classmethod
        def get_coordinator_address(cls, timeout_secs, override_coordinator_port):
            return os.environ["JAX_COORDINATOR_ADDRESS"]

        @classmethod
        def get_process_count(cls):
            return int(os.environ["JAX_NUM_PROCESSES"])

        @classmethod
        def get_process_id(cls):
            return int(os.environ["JAX_PROCESS_ID"])

        @classmethod
        def get_local_process_id(cls):
            return None


def _install():
    import importlib.abc
    import importlib.util

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name != "jax._src.clusters":
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(name)
            if spec is None or spec.loader is None:
                return spec
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                try:
                    _register(module)
                except Exception as e:  # JAX changed: leave it as it is
                    print("tfyarn: could not register the tfyarn cluster with JAX:", e, file=sys.stderr)

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, Finder())


if "JAX_NUM_PROCESSES" in os.environ:
    _install()

# The environment's own sitecustomize, which this one shadows.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]
sys.modules.pop(__name__, None)
try:
    import sitecustomize  # noqa: F401
except ImportError:
    pass
