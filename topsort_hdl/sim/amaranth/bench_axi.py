"""Sustained bandwidth of the AXI engines (``topsort-hdl bench axi``).

Bytes per cycle on the port, from its first data beat to its last, with every leaf (or the
input stream) always ready: an ideal memory (1 cycle of latency, never stalls) and one with a
few hundred cycles of latency, swept over the number of bursts the engine keeps in flight.
"""

import time

from ...hardware.axi import AxiParams, AxiReadEngine, AxiWriteEngine
from .axi_engine_harness import run_reader, run_writer

__all__ = ["AxiMeasurement", "measure_reader", "measure_writer", "BENCH_CASES"]

CHANNEL = 1 << 28


class AxiMeasurement:
    """``bytes_per_cycle`` moved by ``beats`` data beats over ``span`` cycles, and its
    ``efficiency`` against ``peak`` (the data width of every port, in bytes per cycle)."""

    def __init__(self, engine, case, beat_bytes, peak, beats, span, cycles, seconds):
        self.engine = engine
        self.case = case
        self.bytes_per_cycle = round(beats * beat_bytes / span, 2)
        self.efficiency = round(beats * beat_bytes / span / peak, 3)
        self.cycles = cycles
        self.seconds = round(seconds, 1)

    def as_dict(self):
        return {"engine": self.engine, "case": self.case,
                "bytes_per_cycle": self.bytes_per_cycle, "efficiency": self.efficiency,
                "cycles": self.cycles, "seconds": self.seconds}


def measure_reader(leaves=16, burst_bytes=1024, latency=1, outstanding=4, data_width=512,
                   bytes_per_leaf=8192):
    """Every leaf reads one region of ``bytes_per_leaf`` from its own channel."""
    start = time.perf_counter()
    params = AxiParams(data_width=data_width, id_width=max(1, (leaves - 1).bit_length()))
    engine = AxiReadEngine(params, leaves, burst_bytes=burst_bytes, max_outstanding=outstanding)
    commands = [(leaf, leaf % 32 * CHANNEL, bytes_per_leaf) for leaf in range(leaves)]
    run = run_reader(engine, commands, latency=latency, max_bursts=64)
    first, last = run.memory.beat_cycles["r"]
    case = f"l={leaves} burst={burst_bytes} latency={latency} outstanding={outstanding}"
    return AxiMeasurement("reader", case, params.beat_bytes, params.beat_bytes,
                          run.memory.read_beats,
                          last - first + 1, run.cycles, time.perf_counter() - start)


def measure_writer(ports=1, burst_bytes=4096, latency=1, outstanding=4, data_width=512,
                   batch_bytes=4096, port_bytes=131072):
    """One job of ``port_bytes`` per port streamed without gaps, batched over ``ports``."""
    start = time.perf_counter()
    params = AxiParams(data_width=data_width)
    engine = AxiWriteEngine(params, ports, burst_bytes=burst_bytes, batch_bytes=batch_bytes,
                            max_outstanding=outstanding)
    bases = [port * 2 * CHANNEL for port in range(ports)]
    payload = bytes(range(256)) * (ports * port_bytes // 256)
    run = run_writer(engine, [(bases, payload)], latency=latency, max_bursts=64)
    spans = [m.beat_cycles["w"] for m in run.memories]
    span = max(s[1] for s in spans) - min(s[0] for s in spans) + 1
    beats = sum(m.write_beats for m in run.memories)
    case = (f"ports={ports} burst={burst_bytes} latency={latency} outstanding={outstanding}")
    return AxiMeasurement("writer", case, params.beat_bytes, params.beat_bytes * ports, beats,
                          span,
                          run.cycles[0], time.perf_counter() - start)


BENCH_CASES = [
    (measure_reader, {"burst_bytes": 1024, "latency": 1, "outstanding": 4}),
    (measure_reader, {"burst_bytes": 4096, "latency": 1, "outstanding": 4,
                      "bytes_per_leaf": 16384}),
    *[(measure_reader, {"burst_bytes": 1024, "latency": 200, "outstanding": n})
      for n in (4, 8, 12, 13, 14, 16)],
    (measure_writer, {"burst_bytes": 4096, "latency": 1, "outstanding": 4}),
    (measure_writer, {"burst_bytes": 1024, "latency": 1, "outstanding": 4}),
    *[(measure_writer, {"burst_bytes": 4096, "latency": 200, "outstanding": n})
      for n in (1, 2, 4, 8)],
    (measure_writer, {"ports": 4, "burst_bytes": 4096, "latency": 1, "outstanding": 4}),
    (measure_writer, {"ports": 4, "burst_bytes": 4096, "latency": 200, "outstanding": 4}),
]
