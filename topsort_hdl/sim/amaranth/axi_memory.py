"""An AXI4 memory for the Amaranth simulator, checking every cycle of its master against
:class:`~topsort_hdl.sim.axi_protocol.AxiProtocolChecker`.

:class:`AxiMemory` is an ideal or slow memory with a configurable latency, random stalls on
every channel, reordering and interleaving of read data between IDs, and error responses for
chosen address ranges, over a :class:`SparseMemory`.
"""

import random
from collections import deque

from ...hardware.axi.signature import PAGE_BYTES, RESP_OKAY, RESP_SLVERR
from ..axi_protocol import SAMPLED, AxiProtocolChecker

__all__ = ["AxiMemory", "SparseMemory"]


class SparseMemory:
    """A byte-addressed memory of 4 KB pages allocated on first touch; unwritten bytes are 0."""

    def __init__(self):
        self.pages = {}
        self.written = set()   # every byte address ever written, to catch stray writes

    def _page(self, number):
        return self.pages.setdefault(number, bytearray(PAGE_BYTES))

    def write(self, addr, data, strobe=None):
        for i, byte in enumerate(data):
            if strobe is None or strobe >> i & 1:
                self.written.add(addr + i)
                self._page((addr + i) // PAGE_BYTES)[(addr + i) % PAGE_BYTES] = byte

    def read(self, addr, length):
        out = bytearray(length)
        for i in range(length):
            page = self.pages.get((addr + i) // PAGE_BYTES)
            if page is not None:
                out[i] = page[(addr + i) % PAGE_BYTES]
        return bytes(out)


class AxiMemory:
    """An AXI4 slave for the Amaranth simulator, in front of a :class:`SparseMemory`.

    ``latency`` cycles pass between a burst's address and its first data beat (or its write
    response after the last beat); up to ``max_bursts`` bursts per direction are accepted
    ahead. ``stall`` is the probability that the memory holds a READY or VALID low in a cycle.
    ``reorder`` serves read bursts of different IDs in random order, ``interleave`` mixes their
    beats. Addresses inside ``error_ranges`` ([start, end) pairs) answer SLVERR.
    """

    def __init__(self, port, data_width, *, memory=None, latency=2, max_bursts=16, stall=0.0,
                 reorder=False, interleave=False, error_ranges=(), seed=0, checker=None,
                 name="axi"):
        self.port = port
        self.beat_bytes = data_width // 8
        self.memory = memory if memory is not None else SparseMemory()
        self.latency = latency
        self.max_bursts = max_bursts
        self.stall = stall
        self.reorder = reorder
        self.interleave = interleave
        self.error_ranges = list(error_ranges)
        self.rng = random.Random(seed)
        self.checker = checker or AxiProtocolChecker(data_width, name=name)
        self.cycle = 0
        self.reads = []    # [due cycle, id, next beat address, beats left, error]
        self.writes = deque()  # [id, address, beats, error] waiting for data
        self.responses = deque()  # (due cycle, id, resp)
        self.read_beats = 0
        self.write_beats = 0
        self.beat_cycles = {"r": [None, None], "w": [None, None]}  # first and last data beat

    def _error(self, addr, beats):
        end = addr + beats * self.beat_bytes
        return any(lo < end and addr < hi for lo, hi in self.error_ranges)

    def _go(self):
        return self.rng.random() >= self.stall

    def _count(self, channel):
        span = self.beat_cycles[channel]
        if span[0] is None:
            span[0] = self.cycle
        span[1] = self.cycle

    def add_to(self, simulator):
        simulator.add_testbench(self._process, background=True)

    async def _process(self, ctx):
        # One process for the whole port keeps the per-cycle cost down and the order exact:
        # drive this cycle's slave outputs, then sample what the edge will transfer.
        p = self.port
        holding_r = None
        holding_b = None
        signals = [getattr(p, name) for name in SAMPLED]
        rdata, rresp, bresp_sig = p.rdata, p.rresp, p.bresp
        while True:
            self.cycle += 1
            ctx.set(p.arready, int(len(self.reads) < self.max_bursts and self._go()))
            ctx.set(p.awready, int(len(self.writes) < self.max_bursts and self._go()))
            ctx.set(p.wready, int(bool(self.writes) and self._go()))
            if holding_r is None:
                due = [b for b in self.reads if b[0] <= self.cycle]
                if due and self._go():
                    if not (self.reorder or self.interleave):
                        due = due[:1]
                    # in order within an ID: only the oldest burst of each ID may answer
                    heads = {}
                    for burst in due:
                        oldest = next(b for b in self.reads if b[1] == burst[1])
                        if oldest is burst:
                            heads[burst[1]] = burst
                    started = [b for b in heads.values() if b[5]]
                    pool = list(heads.values()) if self.interleave or not started else started
                    if pool:
                        holding_r = self.rng.choice(pool) if (self.reorder or self.interleave) \
                            else pool[0]
                        holding_r[5] = True
            if holding_r is not None:
                _, rid, addr, left, error, _ = holding_r
                ctx.set(p.rvalid, 1)
                ctx.set(p.rid, rid)
                ctx.set(p.rlast, int(left == 1))
                ctx.set(rresp, RESP_SLVERR if error else RESP_OKAY)
                ctx.set(rdata, int.from_bytes(self.memory.read(addr, self.beat_bytes),
                                              "little"))
            else:
                ctx.set(p.rvalid, 0)
            if holding_b is None and self.responses and self.responses[0][0] <= self.cycle \
                    and self._go():
                holding_b = self.responses.popleft()
            if holding_b is not None:
                ctx.set(p.bvalid, 1)
                ctx.set(p.bid, holding_b[1])
                ctx.set(bresp_sig, holding_b[2])
            else:
                ctx.set(p.bvalid, 0)
            sampled = await ctx.tick().sample(*signals)
            s = dict(zip(SAMPLED, sampled[2:], strict=True))
            self.checker.sample(s)
            if s["arvalid"] and s["arready"]:
                beats = s["arlen"] + 1
                self.reads.append([self.cycle + self.latency, s["arid"], s["araddr"], beats,
                                   self._error(s["araddr"], beats), False])
            if holding_r is not None and s["rready"]:
                self._count("r")
                self.read_beats += 1
                holding_r[2] += self.beat_bytes
                holding_r[3] -= 1
                if holding_r[3] == 0:
                    self.reads.remove(holding_r)
                holding_r = None
            if s["awvalid"] and s["awready"]:
                beats = s["awlen"] + 1
                self.writes.append([s["awid"], s["awaddr"], beats,
                                    self._error(s["awaddr"], beats)])
            if s["wvalid"] and s["wready"]:
                burst = self.writes[0]
                self._count("w")
                self.write_beats += 1
                if not burst[3]:
                    self.memory.write(burst[1], s["wdata"].to_bytes(self.beat_bytes, "little"),
                                      s["wstrb"])
                burst[1] += self.beat_bytes
                burst[2] -= 1
                if burst[2] == 0:
                    self.writes.popleft()
                    self.responses.append((self.cycle + self.latency, burst[0],
                                           RESP_SLVERR if burst[3] else RESP_OKAY))
            if holding_b is not None and s["bready"]:
                holding_b = None
