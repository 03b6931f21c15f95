"""What ``make qor`` measures besides synthesis: RTL cycle counts of fixed benchmark sorts (the
performance model's validation set) and the generator's time and peak memory."""

import subprocess
import sys
import time

from ...core.config import config_from
from ..jobs import run_jobs

__all__ = ["BENCHMARK_SORTS", "ORDER_SORTS", "benchmark_sweeps", "measure_sorts",
           "measure_generator"]

# Fixed benchmark sorts: (config, simulator, record counts). Random keys (drawn from the count),
# ideal memory, every result checked exactly. The counts cover 2 to 5 passes, tuned last
# passes with 2, 4 and 8 active leaves, trees with different last passes (tiny 257), counts
# that divide by nothing, phase 2 with idle leaves (small 3,000 and 20,000) and the capacity.
BENCHMARK_SORTS = {
    "tiny": ("icarus", [100, 257, 600, 1234, 2000, 3001, 4096, 6000, 8064]),
    "small": ("verilator", [3000, 20000, 65536]),
}
SMALL_SET = ["channel_bytes=1048576", "trees=2"]    # 65,536 records in two trees
# One sort per input order (INPUT_ORDERS: random, sorted, reversed, nearly sorted, few
# distinct keys) on a preset: (config, simulator, records). docs/throughput.md.
ORDER_SORTS = ("small", "verilator", 16000)


def benchmark_config(name):
    return config_from(name, SMALL_SET if name == "small" else [])


def benchmark_sweeps():
    """The benchmark sorts as sweeps, one simulator build each: ``(label, config, simulator,
    record counts, input orders)``, the :data:`BENCHMARK_SORTS` then the :data:`ORDER_SORTS`."""
    from ...core.golden.workloads import INPUT_ORDERS

    sweeps = [(name, benchmark_config(name), sim, counts, ("random",))
              for name, (sim, counts) in BENCHMARK_SORTS.items()]
    name, sim, count = ORDER_SORTS
    sweeps.append((f"{name} in each order", config_from(name), sim, [count], INPUT_ORDERS))
    return sweeps


def measure_sorts(progress=print, scheduler=None, workers=None):
    """Cycle counts of the :func:`benchmark_sweeps` on their RTL, each sweep a job
    (:func:`.run_jobs`: ``workers`` local processes or a Dask ``scheduler``'s workers); return
    ``[(config, rows, by_order), ...]`` in the sweeps' order."""
    sweeps = benchmark_sweeps()
    for label, _, sim, counts, orders in sweeps:
        progress(f"simulating {label} ({sim}): {len(counts) * len(orders)} sorts, "
                 f"{', '.join(map(str, counts))} records" +
                 (f", {', '.join(orders)}" if len(orders) > 1 else ""))
    jobs = [(index, (config, counts, sim, orders))
            for index, (_, config, sim, counts, orders) in enumerate(sweeps)]
    rows = {}
    for index, (result, seconds) in run_jobs(_sweep_job, jobs, scheduler, workers):
        progress(f"  {sweeps[index][0]} done in {seconds:.0f} s")
        rows[index] = result
    return [(config, rows[index], len(orders) > 1)
            for index, (_, config, _, _, orders) in enumerate(sweeps)]


def _sweep_job(config, counts, sim, orders):
    from ...sim.kernel_sort import simulate_sweep

    start = time.perf_counter()
    rows = simulate_sweep(config, counts, sim=sim, orders=orders)
    return rows, time.perf_counter() - start


def measure_generator(name="u280"):
    """Seconds and peak resident memory (MB) of generating ``name``'s kernel and Vitis files,
    in a child process of its own."""
    script = ("import resource, tempfile; from pathlib import Path; "
              "from topsort_hdl.core.config import config_from; "
              "from topsort_hdl.targets.kernel_verilog import generate; "
              "out = Path(tempfile.mkdtemp()); "
              f"done = generate(config_from({name!r}), out); "
              # (Linux: the child's own high-water mark; ru_maxrss would carry the parent's
              # over the exec, so the figure would depend on what the parent held)
              "hwm = [int(line.split()[1]) for line in open('/proc/self/status') "
              "if line.startswith('VmHWM:')] if Path('/proc/self/status').exists() else []; "
              "peak = hwm[0] if hwm else max(resource.getrusage(who).ru_maxrss for who in "
              "(resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)); "
              "print(done['bytes'], done['modules'], peak)")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"generating {name} failed: {done.stderr.strip()[-500:]}")
    verilog_bytes, modules, peak_kb = map(int, done.stdout.split()[-3:])
    return {"seconds": round(seconds, 1), "peak_mb": round(peak_kb / 1024),
            "verilog_mb": round(verilog_bytes / 1e6, 1), "modules": modules}
