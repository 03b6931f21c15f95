"""Credit counting: a producer that starts only what its output buffer will have room for."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..properties import check, is_formal
from ..records import check_at_least

__all__ = ["CreditCounter"]


class CreditCounter(wiring.Component):
    """Entries promised to a buffer of ``depth`` entries and not yet taken out of it.

    A producer that may only start what the buffer will have room for, and decides it a cycle
    ahead (from registers), asks ``room_next``: room for one more in the next cycle, even if
    nothing leaves in this one.

    Parameters
    ----------
    depth : int
        Entries the buffer holds, at least 2.

    Members
    -------
    add : In(1)
        One more entry is promised this cycle.
    sub : In(1)
        One entry leaves the buffer this cycle.
    room : Out(1)
        Fewer than ``depth`` entries are promised (a register).
    room_next : Out(1)
        Fewer than ``depth`` will be promised in the next cycle, counting this cycle's
        ``add`` and not its ``sub`` (from registers and ``add``).
    level : Out(range(depth + 1))
        Entries promised and not yet taken out (as ``lib.fifo``'s ``level``).
    """

    def __init__(self, depth):
        check_at_least("depth", depth, 2)
        self._depth = depth
        super().__init__({"add": In(1), "sub": In(1), "room": Out(1, init=1), "room_next": Out(1),
                          "level": Out(range(depth + 1))})

    def elaborate(self, platform):
        m = Module()
        depth = self._depth
        count = self.level
        room_after_one = Signal(init=1)  # count < depth - 1, a register of its own
        m.d.comb += self.room_next.eq(Mux(self.add, room_after_one, self.room))
        m.d.sync += count.eq(count + self.add - self.sub)
        with m.If(self.add & ~self.sub):
            m.d.sync += [self.room.eq(count < depth - 1), room_after_one.eq(count < depth - 2)]
        with m.Elif(~self.add & self.sub):
            m.d.sync += [self.room.eq(1), room_after_one.eq(self.room)]
        if is_formal(platform):
            check(m, ~self.add | self.room, "promised with no room")
            check(m, ~self.sub | (count != 0), "an entry left that was never promised")
            check(m, count <= depth, f"more than {depth} entries promised")
            check(m, self.room == (count < depth), "room is count < depth")
            check(m, room_after_one == (count < depth - 1), "room after one is count < depth - 1")
        return m
