"""An AXI4-Lite master for Amaranth-simulator testbenches, with random channel timing.

It also checks the slave's side of the protocol: no B before both AW and W, no R before AR,
BVALID/RVALID (and RDATA) held until accepted, and exactly one response per request.
"""

import random

__all__ = ["AxiLiteMasterSim"]


class AxiLiteMasterSim:
    """Drive the ``AxiLiteSignature`` interface ``bus`` of a slave from ``async def tb(ctx)``.

    Every call picks random delays: AW and W valid come up in either order or together, and
    BREADY/RREADY come up after a random number of cycles. Writes and reads may run from two
    testbenches at once (they use disjoint signals). A slave that hangs raises
    ``TimeoutError`` after ``timeout`` cycles.
    """

    def __init__(self, bus, *, seed=0, max_delay=3, timeout=64):
        self.bus = bus
        self.rng = random.Random(seed)
        self.max_delay = max_delay
        self.timeout = timeout

    def _delay(self):
        return self.rng.randint(0, self.max_delay)

    def _junk(self, width):
        return self.rng.randrange(1 << width)

    async def write(self, ctx, addr, data, strb=0xF):
        """Write ``data`` under byte-lane mask ``strb`` to byte address ``addr``; return BRESP."""
        bus = self.bus
        aw_wait, w_wait = self._delay(), self._delay()
        aw_done = w_done = False
        for _ in range(self.timeout):
            # Address and data lines carry junk while their valid is low.
            aw_on = not aw_done and aw_wait == 0
            w_on = not w_done and w_wait == 0
            ctx.set(bus.awvalid, aw_on)
            ctx.set(bus.awaddr, addr if aw_on else self._junk(len(bus.awaddr)))
            ctx.set(bus.wvalid, w_on)
            ctx.set(bus.wdata, data if w_on else self._junk(32))
            ctx.set(bus.wstrb, strb if w_on else self._junk(4))
            ctx.set(bus.bready, 0)
            *_, awready, wready, bvalid = await ctx.tick().sample(bus.awready, bus.wready,
                                                                  bus.bvalid)
            assert not bvalid, "BVALID before the write's AW and W were both taken"
            aw_done |= aw_on and bool(awready)
            w_done |= w_on and bool(wready)
            aw_wait, w_wait = max(aw_wait - 1, 0), max(w_wait - 1, 0)
            if aw_done and w_done:
                break
        else:
            raise TimeoutError(f"write to {addr:#x}: AW/W not taken in {self.timeout} cycles")
        ctx.set(bus.awvalid, 0)
        ctx.set(bus.wvalid, 0)
        seen = False
        for _ in range(self.timeout):
            take = self.rng.random() < 0.5
            ctx.set(bus.bready, take)
            *_, bvalid, bresp = await ctx.tick().sample(bus.bvalid, bus.bresp)
            assert bvalid or not seen, "BVALID dropped before BREADY"
            seen |= bool(bvalid)
            if take and bvalid:
                ctx.set(bus.bready, 0)
                assert not ctx.get(bus.bvalid), "a second B for one write"
                return bresp
        raise TimeoutError(f"write to {addr:#x}: no B in {self.timeout} cycles")

    async def read(self, ctx, addr):
        """Read byte address ``addr``; return ``(rdata, rresp)``."""
        bus = self.bus
        wait = self._delay()
        for _ in range(self.timeout):
            on = wait == 0
            ctx.set(bus.arvalid, on)
            ctx.set(bus.araddr, addr if on else self._junk(len(bus.araddr)))
            ctx.set(bus.rready, 0)
            *_, arready, rvalid = await ctx.tick().sample(bus.arready, bus.rvalid)
            assert not rvalid, "RVALID before AR was taken"
            wait = max(wait - 1, 0)
            if on and arready:
                break
        else:
            raise TimeoutError(f"read of {addr:#x}: AR not taken in {self.timeout} cycles")
        ctx.set(bus.arvalid, 0)
        held = None
        for _ in range(self.timeout):
            take = self.rng.random() < 0.5
            ctx.set(bus.rready, take)
            *_, rvalid, rdata, rresp = await ctx.tick().sample(bus.rvalid, bus.rdata,
                                                               bus.rresp)
            if held is not None:
                assert rvalid, "RVALID dropped before RREADY"
                assert (rdata, rresp) == held, "RDATA/RRESP changed while RVALID waited"
            if rvalid:
                held = (rdata, rresp)
            if take and rvalid:
                ctx.set(bus.rready, 0)
                assert not ctx.get(bus.rvalid), "a second R for one read"
                return rdata, rresp
        raise TimeoutError(f"read of {addr:#x}: no R in {self.timeout} cycles")
