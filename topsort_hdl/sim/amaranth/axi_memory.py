"""An AXI4 memory for the Amaranth simulator, and the protocol rules every master must obey.

:class:`AxiProtocolChecker` is fed one sample of a port per cycle (a dict of signal values) and
raises :class:`AxiProtocolError` on the first violation; the cocotb benches feed it from the
emitted Verilog, :class:`AxiMemory` from the Amaranth simulator. :class:`AxiMemory` is an
ideal or slow memory with a configurable latency, random stalls on every channel, reordering
and interleaving of read data between IDs, and error responses for chosen address ranges.
"""

import random
from collections import deque

from ...axi.signature import BURST_INCR, MAX_BURST_BEATS, PAGE_BYTES, RESP_OKAY, RESP_SLVERR

__all__ = ["AXI_MASTER_SIGNALS", "AxiMemory", "AxiProtocolChecker", "AxiProtocolError",
           "SparseMemory"]

# What a master drives, per channel (checked for stability while VALID waits for READY).
AXI_MASTER_SIGNALS = {
    "ar": ("arid", "araddr", "arlen", "arsize", "arburst"),
    "aw": ("awid", "awaddr", "awlen", "awsize", "awburst"),
    "w": ("wdata", "wstrb", "wlast"),
}
SAMPLED = sorted({name for names in AXI_MASTER_SIGNALS.values() for name in names} | {
    "arvalid", "arready", "awvalid", "awready", "wvalid", "wready", "bvalid", "bready",
    "rvalid", "rready", "rlast", "rid", "bid"})


class AxiProtocolError(AssertionError):
    pass


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


class AxiProtocolChecker:
    """The AMBA AXI4 rules our masters must keep, checked once per cycle.

    Checked: AxBURST is INCR, AxSIZE is the full data width, the address is beat aligned, no
    burst crosses a 4 KB page, VALID and the payload are held until READY, WLAST is on the last
    beat of its burst and only there (data may run ahead of its address), no more than
    ``max_outstanding`` bursts of each direction are in flight (issued and not yet answered by
    RLAST / BVALID), and no beat or response arrives for a burst that was never issued.
    """

    def __init__(self, data_width, max_outstanding=None, name="axi"):
        self.beat_bytes = data_width // 8
        self.size_code = (self.beat_bytes - 1).bit_length()
        self.max_outstanding = max_outstanding
        self.name = name
        self.restart()
        self.bursts = {"ar": [], "aw": []}  # (id, addr, len) of every accepted burst, in order

    def restart(self):
        """Forget every transaction in flight (the port was reset)."""
        self.waiting = {}        # channel -> payload offered and not yet taken
        self.aw_lengths = deque()  # beats of accepted AW bursts not matched with their data
        self.w_done = deque()    # beats of W bursts ended by WLAST not matched with an AW
        self.w_beats = 0         # W beats of the burst in progress
        self.reads_in_flight = 0
        self.writes_in_flight = 0
        self.cycle = 0

    def fail(self, message):
        raise AxiProtocolError(f"{self.name}, cycle {self.cycle}: {message}")

    def _check_address(self, ch, s):
        addr, length = s[f"{ch}addr"], s[f"{ch}len"] + 1
        if s[f"{ch}burst"] != BURST_INCR:
            self.fail(f"{ch.upper()}BURST {s[f'{ch}burst']} is not INCR")
        if s[f"{ch}size"] != self.size_code:
            self.fail(f"{ch.upper()}SIZE {s[f'{ch}size']} is not the bus width "
                      f"({self.size_code})")
        if length > MAX_BURST_BEATS:
            self.fail(f"{ch.upper()}LEN {length - 1} is over 255")
        if addr % self.beat_bytes:
            self.fail(f"{ch.upper()}ADDR {addr:#x} is not aligned to a beat")
        if addr // PAGE_BYTES != (addr + length * self.beat_bytes - 1) // PAGE_BYTES:
            self.fail(f"burst at {addr:#x} of {length} beats crosses a 4 KB boundary")

    def _check_stable(self, ch, s):
        names = AXI_MASTER_SIGNALS[ch]
        payload = tuple(s[name] for name in names)
        held = self.waiting.get(ch)
        if held is not None:
            if not s[f"{ch}valid"]:
                self.fail(f"{ch.upper()}VALID dropped before {ch.upper()}READY")
            if payload != held:
                changed = [n for n, a, b in zip(names, held, payload, strict=True) if a != b]
                self.fail(f"{', '.join(changed)} changed while {ch.upper()}VALID waited")
        if s[f"{ch}valid"] and not s[f"{ch}ready"]:
            self.waiting[ch] = payload
        else:
            self.waiting.pop(ch, None)
        return s[f"{ch}valid"] and s[f"{ch}ready"]

    def sample(self, s):
        """Check one cycle: ``s`` maps the signal names of :data:`SAMPLED` to integers."""
        self.cycle += 1
        if self._check_stable("ar", s):
            self._check_address("ar", s)
            self.reads_in_flight += 1
            self.bursts["ar"].append((s["arid"], s["araddr"], s["arlen"]))
            if self.max_outstanding and self.reads_in_flight > self.max_outstanding:
                self.fail(f"{self.reads_in_flight} read bursts in flight, limit "
                          f"{self.max_outstanding}")
        if s["rvalid"] and s["rready"] and s["rlast"]:
            if self.reads_in_flight == 0:
                self.fail("RLAST for a burst that was never issued")
            self.reads_in_flight -= 1
        if self._check_stable("aw", s):
            self._check_address("aw", s)
            self.writes_in_flight += 1
            self.bursts["aw"].append((s["awid"], s["awaddr"], s["awlen"]))
            if self.max_outstanding and self.writes_in_flight > self.max_outstanding:
                self.fail(f"{self.writes_in_flight} write bursts in flight, limit "
                          f"{self.max_outstanding}")
            self.aw_lengths.append(s["awlen"] + 1)
        if self._check_stable("w", s):
            # AXI4 lets write data run ahead of its address: match bursts in order.
            self.w_beats += 1
            known = len(self.w_done) < len(self.aw_lengths)
            if known:
                expected = self.aw_lengths[len(self.w_done)]
                if bool(s["wlast"]) != (self.w_beats == expected):
                    self.fail(f"WLAST={s['wlast']} on beat {self.w_beats} of a "
                              f"{expected}-beat burst")
            if s["wlast"]:
                self.w_done.append(self.w_beats)
                self.w_beats = 0
        while self.aw_lengths and self.w_done:
            expected, sent = self.aw_lengths.popleft(), self.w_done.popleft()
            if sent != expected:
                self.fail(f"a {expected}-beat write burst carried {sent} beats")
        if s["bvalid"] and s["bready"]:
            if self.writes_in_flight == 0:
                self.fail("write response for a burst that was never issued")
            self.writes_in_flight -= 1

    def idle(self):
        """Fail unless every burst issued has been answered and no data is half sent."""
        if (self.reads_in_flight or self.writes_in_flight or self.w_beats or self.aw_lengths
                or self.w_done):
            self.fail(f"not idle: {self.reads_in_flight} reads and {self.writes_in_flight} "
                      f"writes in flight, {self.w_beats} beats of an unfinished burst")


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
