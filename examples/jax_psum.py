"""A sum over every process of a multi-process JAX job (CPU), the hello world of jax.distributed.

    tfyarn run --framework jax --worker 2x1c,1g --python .venv-jax/bin/python examples/jax_psum.py

jax.distributed.initialize() takes no arguments: tfyarn sets JAX_COORDINATOR_ADDRESS (worker:0,
which hosts JAX's coordination service), JAX_NUM_PROCESSES and JAX_PROCESS_ID. Each process
prints "process P of N" and the psum of (P + 1) over all processes, N(N+1)/2 on every one.
"""
import jax
import jax.numpy as jnp

jax.distributed.initialize()
pid, n = jax.process_index(), jax.process_count()
print(f"process {pid} of {n} ({jax.local_device_count()} local of {jax.device_count()} devices)", flush=True)

# One value per local device; psum over every device of every process.
local = jnp.full((jax.local_device_count(),), pid + 1.0)
total = jax.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")(local)
print(f"process {pid} psum {float(total[0]):.1f}", flush=True)
jax.distributed.shutdown()
