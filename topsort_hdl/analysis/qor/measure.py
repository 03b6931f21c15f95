"""What ``make qor`` measures besides synthesis: RTL cycle counts of fixed benchmark sorts (the
performance model's validation set) and the generator's time and peak memory."""

import subprocess
import sys
import time

from ...core.config import config_from

__all__ = ["BENCHMARK_SORTS", "ORDER_SORTS", "measure_sorts", "measure_order_sorts",
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


def measure_sorts(name, progress=print):
    """Cycle counts of the benchmark sorts of configuration ``name`` on its RTL."""
    from ...sim.kernel_sort import simulate_sweep

    sim, counts = BENCHMARK_SORTS[name]
    config = benchmark_config(name)
    progress(f"simulating {name} ({sim}): {len(counts)} sorts, "
             f"{', '.join(map(str, counts))} records")
    start = time.perf_counter()
    rows = simulate_sweep(config, counts, sim=sim)
    progress(f"  done in {time.perf_counter() - start:.0f} s")
    return config, rows


def measure_order_sorts(progress=print):
    """Cycle counts of one :data:`ORDER_SORTS` sort per input order on the RTL."""
    from ...core.golden.workloads import INPUT_ORDERS
    from ...sim.kernel_sort import simulate_sweep

    name, sim, count = ORDER_SORTS
    config = config_from(name)
    progress(f"simulating {name} ({sim}): {count} records in each order, "
             f"{', '.join(INPUT_ORDERS)}")
    start = time.perf_counter()
    rows = simulate_sweep(config, [count], sim=sim, orders=INPUT_ORDERS)
    progress(f"  done in {time.perf_counter() - start:.0f} s")
    return config, rows


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
