"""A FIFO whose flags are flip-flops, for links whose two ends placers spread apart.

Every queue of the package is a component between two streams, ``i`` (written) and ``o``
(read), and keeps its own rules at both: it takes a transfer only with room and gives one only
with an entry. A *credited* queue serves a writer that counts its room in advance (a merge
unit's credit counter): its writes are not gated by the room, and a formal build checks that
the writer never offers one without it.
"""

from amaranth.hdl import Module, Mux, Signal, Value
from amaranth.lib import stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .logic import next_slot
from .properties import check, held_until_taken, is_formal, order_kept

__all__ = ["RegisteredFlagsFIFO", "SkidBuffer"]


class RegisteredFlagsFIFO(wiring.Component):
    """A FIFO of ``capacity`` entries of ``shape`` whose flags, ``i.ready`` and ``o.valid``,
    are flip-flops.

    The amaranth FIFOs derive their flags from the fill level, so a write or read enable runs
    through a compare of the level, then into the logic of the block on the other side: here
    each flag is decided from the transfers and a compare of the count that was ready a cycle
    before, and the other side starts at a flip-flop. ``buffered``: the head is a register
    loaded from a synchronously read memory (block RAM), as in
    :class:`~amaranth.lib.fifo.SyncFIFOBuffered`, with the same capacity and latency (one
    entry: the head register alone, taking a write every other cycle); otherwise the head is
    the memory's asynchronous read. ``credited``: the writer offers an entry only with room
    (see the module), so ``i.valid`` alone writes. ``ram_style``, if given, is set as the
    memory's ``ram_style`` attribute.

    Members
    -------
    i : In(stream.Signature(shape))
    o : Out(stream.Signature(shape))
    """

    def __init__(self, *, shape, capacity, buffered, ram_style=None, credited=False):
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, not {capacity}")
        self.capacity, self.buffered, self.credited = capacity, buffered, credited
        self.depth = capacity - 1 if buffered else capacity     # entries in the memory
        self.ram_style = ram_style
        super().__init__({"i": In(stream.Signature(shape)), "o": Out(stream.Signature(shape))})

    def elaborate(self, platform):
        m = Module()
        depth = self.depth
        width = Value.cast(self.i.payload).shape().width
        w_data, r_data = Value.cast(self.i.payload), Value.cast(self.o.payload)
        w_rdy, r_rdy = self.i.ready, self.o.valid
        # A write: an offer the queue has room for (a credited writer's, by its rule). A read:
        # a taken head; a buffered queue may take the enable while empty (it ignores it).
        write = self.i.valid if self.credited else self.i.valid & w_rdy
        read = self.o.ready if self.buffered else self.o.ready & r_rdy
        if depth == 0:      # the head register alone
            m.d.comb += w_rdy.eq(~r_rdy)
            with m.If(write):
                m.d.sync += [r_data.eq(w_data), r_rdy.eq(1)]
            with m.Elif(read):
                m.d.sync += r_rdy.eq(0)
            if is_formal(platform):
                self._properties(m, level=r_rdy, peek=lambda offset: r_data)
            return m

        m.submodules.storage = storage = Memory(shape=width, depth=depth, init=[])
        if self.ram_style is not None:
            storage.attrs["ram_style"] = self.ram_style
        w_port = storage.write_port()
        r_port = storage.read_port(domain="sync" if self.buffered else "comb")
        produce = Signal(range(depth))
        consume = Signal(range(depth))
        count = Signal(range(depth + 1))           # entries in the memory
        stored = Signal()                          # count != 0
        full = Signal()                            # count == depth: w_rdy is its complement
        m.d.comb += w_rdy.eq(~full)

        if self.buffered:
            load = Signal()                        # memory -> head register
            m.d.comb += load.eq(stored & (~r_rdy | read))
            m.d.comb += r_port.en.eq(load)
            m.d.sync += r_rdy.eq(load | r_rdy & ~read)
        else:
            load = read
            m.d.comb += r_rdy.eq(stored)
        m.d.comb += [
            w_port.addr.eq(produce), w_port.data.eq(w_data), w_port.en.eq(write),
            r_port.addr.eq(consume), r_data.eq(r_port.data),
        ]
        with m.If(write):
            m.d.sync += produce.eq(next_slot(produce, depth))
        with m.If(load):
            m.d.sync += consume.eq(next_slot(consume, depth))
        with m.If(write & ~load):
            m.d.sync += count.eq(count + 1)
        with m.If(load & ~write):
            m.d.sync += count.eq(count - 1)
        # (a write and a read together leave both flags as they are: set)
        m.d.sync += [
            stored.eq(write | stored & ~(load & (count == 1))),
            full.eq(~load & (full | write & (count == depth - 1))),
        ]
        if is_formal(platform):
            check(m, (produce < depth) & (consume < depth), "pointers inside the memory")
            check(m, full == (count == depth), "full flag is count == depth")
            check(m, stored == (count != 0), "stored flag is count != 0")
            check(m, produce == Mux(consume + count >= depth, consume + count - depth,
                                    consume + count), "pointers are count apart")
            self._properties(m, level=count + r_rdy if self.buffered else count,
                             peek=self._peek(m, storage, consume))
        return m

    def _peek(self, m, storage, consume):
        """The data of the entry ``offset`` places behind the head, through a read port of
        its own (formal builds only)."""
        def peek(offset):
            port = storage.read_port(domain="comb")
            # (a buffered queue's head, when it has one, is its head register)
            ahead = self.o.valid if self.buffered else 0
            slot = consume + (offset - ahead)[:len(consume) + 1]
            m.d.comb += port.addr.eq(Mux(slot >= self.depth, slot - self.depth, slot))
            return Mux((offset == 0) & self.o.valid, Value.cast(self.o.payload), port.data)
        return peek

    def _properties(self, m, level, peek):
        """The stream rules at ``o``, a credited writer's rule at ``i``, and what is
        transferred in leaves once, in order, unchanged."""
        i, o = self.i, self.o
        if self.credited:
            check(m, ~i.valid | i.ready, "a credited writer wrote while full")
        held_until_taken(m, o.valid, o.ready, Value.cast(o.payload), "head")
        order_kept(m, i.valid & i.ready, Value.cast(i.payload), o.valid & o.ready,
                   Value.cast(o.payload), level, self.capacity, "queue", peek)


class SkidBuffer(wiring.Component):
    """A queue of two entries in registers: the head drives ``o`` (payload and ``valid``
    flip-flops), and ``i.ready`` is the second entry's free flag, a flip-flop too. An entry
    written while the head is free (empty, or taken this cycle) goes to the head, otherwise to
    the second entry; the head takes the second entry when it frees. The writer sees room from
    a flip-flop, and nothing from ``o.ready`` reaches the head's registers but through their
    enables: a stage whose consumer is placed far away. ``emptying``: the queue holds nothing
    after this cycle unless an entry is written.

    ``i`` carries ``shape``; ``o`` carries ``head_shape``, ``to_head(payload)`` of each entry
    as it enters the head (by default the entry itself), so a wide form the consumer wants
    from flip-flops (a one-hot select) costs one register, the second entry keeping the
    narrow form.

    Members
    -------
    i : In(stream.Signature(shape))
    o : Out(stream.Signature(head_shape))
    emptying : Out(1)
    """

    def __init__(self, shape, head_shape=None, to_head=None):
        assert (head_shape is None) == (to_head is None)
        self._to_head = to_head or (lambda payload: payload)
        super().__init__({"i": In(stream.Signature(shape)),
                          "o": Out(stream.Signature(shape if head_shape is None else head_shape)),
                          "emptying": Out(1)})

    def elaborate(self, platform):
        m = Module()
        i, o = self.i, self.o
        second = Signal(i.payload.shape())
        second_valid = Signal()
        head_free = ~o.valid | o.ready
        write = i.valid & i.ready
        m.d.comb += [i.ready.eq(~second_valid), self.emptying.eq(~second_valid & head_free)]
        with m.If(head_free):
            with m.If(second_valid):
                m.d.sync += [o.payload.eq(self._to_head(second)), o.valid.eq(1),
                             second_valid.eq(0)]
            with m.Elif(write):
                m.d.sync += [o.payload.eq(self._to_head(i.payload)), o.valid.eq(1)]
            with m.Else():
                m.d.sync += o.valid.eq(0)
        with m.Elif(write):
            m.d.sync += [second.eq(i.payload), second_valid.eq(1)]
        if is_formal(platform):
            def head_form(payload):
                return Value.cast(self._to_head(payload))
            held_until_taken(m, o.valid, o.ready, Value.cast(o.payload), "head")
            check(m, ~second_valid | o.valid, "a second entry behind no head")
            order_kept(m, write, head_form(i.payload), o.valid & o.ready,
                       Value.cast(o.payload), o.valid + second_valid, 2, "queue",
                       lambda offset: Mux(offset == 0, Value.cast(o.payload),
                                          head_form(second)))
        return m
