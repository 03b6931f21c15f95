"""The AXI4 rules every master of the kernel must keep, checked once per cycle in either
simulator.

:class:`AxiProtocolChecker` is fed one sample of a port per cycle (a dict of the signal values
named in :data:`SAMPLED`) and raises :class:`AxiProtocolError` on the first violation: the
cocotb testbenches feed it from the emitted Verilog (:mod:`.cocotb.axi_ram`), ``AxiMemory``
from Amaranth's simulator (:mod:`.amaranth.axi_memory`).
"""

from collections import deque

from ..hardware.axi.signature import BURST_INCR, MAX_BURST_BEATS, PAGE_BYTES

__all__ = ["AXI_MASTER_OUTPUTS", "AXI_MASTER_SIGNALS", "SAMPLED", "AxiProtocolChecker",
           "AxiProtocolError"]

# What a master drives, per channel (checked for stability while VALID waits for READY).
AXI_MASTER_SIGNALS = {
    "ar": ("arid", "araddr", "arlen", "arsize", "arburst"),
    "aw": ("awid", "awaddr", "awlen", "awsize", "awburst"),
    "w": ("wdata", "wstrb", "wlast"),
}
# Every signal an AXI4 master drives (the optional ones where a port has them): none may ever be
# X or Z, whatever its VALID says (a payload defined only with VALID is legal AXI, but an
# undefined one is where a bug like an address latched from an unevaluated multiplexer hides).
AXI_MASTER_OUTPUTS = tuple(sorted(
    {name for names in AXI_MASTER_SIGNALS.values() for name in names}
    | {"arvalid", "awvalid", "wvalid", "rready", "bready"}
    | {f"{ch}{field}" for ch in ("ar", "aw") for field in ("cache", "lock", "prot", "qos")}))
SAMPLED = sorted({name for names in AXI_MASTER_SIGNALS.values() for name in names} | {
    "arvalid", "arready", "awvalid", "awready", "wvalid", "wready", "bvalid", "bready",
    "rvalid", "rready", "rlast", "rid", "bid"})


class AxiProtocolError(AssertionError):
    pass


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

    def undefined(self, names, in_reset=False):
        """Fail on master outputs ``names`` found X or Z in the coming cycle."""
        self.cycle += 1
        self.fail(f"{', '.join(names)} {'is' if len(names) == 1 else 'are'} X or Z"
                  + (" in reset" if in_reset else ""))

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
