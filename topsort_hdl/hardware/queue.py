"""A FIFO whose flags are flip-flops, for links whose two ends placers spread apart, and the one
way a queue sits between streams (:func:`into_queue`, :func:`out_of_queue`)."""

from amaranth.hdl import Elaboratable, Module, Mux, Signal
from amaranth.lib.memory import Memory

from .properties import check, held_until_taken, is_formal, order_kept

__all__ = ["RegisteredFlagsFIFO", "into_queue", "out_of_queue", "stream_out"]


def into_queue(m, port, queue, payload=None):
    """A stream into ``queue``'s write side: ``port`` (anything with ``valid``, ``ready`` and
    ``payload``, usually a ``lib.stream`` sink) is ready when the queue has room, and each
    transfer writes ``payload`` (default the port's own: a repacking of it otherwise). A queue
    whose ``write_needs_room`` is true is written only with ``w_rdy``, as its rule asks;
    Amaranth's FIFOs and the lane queues ignore a write while full, and are not gated."""
    gated = getattr(queue, "write_needs_room", False)
    m.d.comb += [
        queue.w_data.eq(port.payload if payload is None else payload),
        queue.w_en.eq(port.valid & queue.w_rdy if gated else port.valid),
        port.ready.eq(queue.w_rdy),
    ]


def out_of_queue(m, queue, port):
    """``queue``'s head out as a stream: ``port`` (a ``lib.stream`` source, or anything with
    ``valid``, ``ready`` and ``payload``) is valid while the queue has an entry, and a transfer
    reads it. A queue whose ``read_needs_entry`` is true is read only with ``r_rdy``; the
    others ignore a read while empty. Returns the transfer."""
    gated = getattr(queue, "read_needs_entry", False)
    m.d.comb += [
        port.payload.eq(queue.r_data),
        port.valid.eq(queue.r_rdy),
        queue.r_en.eq(queue.r_rdy & port.ready if gated else port.ready),
    ]
    return port.valid & port.ready


def stream_out(m, queue, port, data, write):
    """Write ``data`` into ``queue`` when ``write`` (the writer keeps the queue's rule: a
    merge unit writes only with a credit), and send the queue's head out of ``port``
    (:func:`out_of_queue`); return the port's transfer."""
    m.d.comb += [queue.w_data.eq(data), queue.w_en.eq(write)]
    return out_of_queue(m, queue, port)


class RegisteredFlagsFIFO(Elaboratable):
    """A FIFO of ``capacity`` entries whose ``r_rdy`` and ``w_rdy`` are flip-flops.

    The interface of :class:`amaranth.lib.fifo.SyncFIFO` (``w_en`` only with ``w_rdy``,
    ``r_en`` only with ``r_rdy``, except that a ``buffered`` FIFO ignores ``r_en`` while
    ``r_rdy`` is low, so that it need not be in the enable). ``buffered``: the head is a
    register loaded from a synchronously read memory (block RAM), as in
    :class:`~amaranth.lib.fifo.SyncFIFOBuffered`, with the same capacity and latency (one entry:
    the head register alone, taking a write every other cycle); otherwise the head is the
    memory's asynchronous read. The amaranth FIFOs derive their flags from the fill level, so
    a write or read enable runs through a compare of the level, then into the logic of the
    block on the other side: here each flag is decided from the enables and a compare of the
    count that was ready a cycle before, and the other side starts at a flip-flop.

    ``ram_style``, if given, is set as the memory's ``ram_style`` attribute.
    """

    write_needs_room = True     # w_en only with w_rdy (checked in formal builds)

    def __init__(self, *, width, capacity, buffered, ram_style=None):
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, not {capacity}")
        self.width, self.capacity, self.buffered = width, capacity, buffered
        self.depth = capacity - 1 if buffered else capacity     # entries in the memory
        self.read_needs_entry = not buffered    # r_en only with r_rdy, unless buffered
        self.ram_style = ram_style
        self.w_data = Signal(width)
        self.w_en = Signal()
        self.w_rdy = Signal()
        self.r_data = Signal(width)
        self.r_en = Signal()
        self.r_rdy = Signal()

    def elaborate(self, platform):
        m = Module()
        depth = self.depth
        if depth == 0:      # the head register alone
            m.d.comb += self.w_rdy.eq(~self.r_rdy)
            with m.If(self.w_en):
                m.d.sync += [self.r_data.eq(self.w_data), self.r_rdy.eq(1)]
            with m.Elif(self.r_en):
                m.d.sync += self.r_rdy.eq(0)
            if is_formal(platform):
                self._properties(m, level=self.r_rdy, peek=lambda offset: self.r_data)
            return m

        m.submodules.storage = storage = Memory(shape=self.width, depth=depth, init=[])
        if self.ram_style is not None:
            storage.attrs["ram_style"] = self.ram_style
        w_port = storage.write_port()
        r_port = storage.read_port(domain="sync" if self.buffered else "comb")
        produce = Signal(range(depth))
        consume = Signal(range(depth))
        count = Signal(range(depth + 1))           # entries in the memory
        stored = Signal()                          # count != 0
        full = Signal()                            # count == depth: w_rdy is its complement
        m.d.comb += self.w_rdy.eq(~full)

        def incr(pointer):
            return Mux(pointer == depth - 1, 0, pointer + 1)

        write = self.w_en
        if self.buffered:
            load = Signal()                        # memory -> head register
            m.d.comb += load.eq(stored & (~self.r_rdy | self.r_en))
            m.d.comb += r_port.en.eq(load)
            m.d.sync += self.r_rdy.eq(load | self.r_rdy & ~self.r_en)
        else:
            load = self.r_en
            m.d.comb += self.r_rdy.eq(stored)
        m.d.comb += [
            w_port.addr.eq(produce), w_port.data.eq(self.w_data), w_port.en.eq(write),
            r_port.addr.eq(consume), self.r_data.eq(r_port.data),
        ]
        with m.If(write):
            m.d.sync += produce.eq(incr(produce))
        with m.If(load):
            m.d.sync += consume.eq(incr(consume))
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
            self._properties(m, level=count + self.r_rdy if self.buffered else count,
                             peek=self._peek(m, storage, consume))
        return m

    def _peek(self, m, storage, consume):
        """The data of the entry ``offset`` places behind the head, through a read port of
        its own (formal builds only)."""
        def peek(offset):
            port = storage.read_port(domain="comb")
            # (a buffered queue's head, when it has one, is its head register)
            ahead = self.r_rdy if self.buffered else 0
            slot = consume + (offset - ahead)[:len(consume) + 1]
            m.d.comb += port.addr.eq(Mux(slot >= self.depth, slot - self.depth, slot))
            return Mux((offset == 0) & self.r_rdy, self.r_data, port.data)
        return peek

    def _properties(self, m, level, peek):
        """The FIFO rules: no write while full, no read while empty unless buffered (which
        ignores it), the head held until read, and what enters leaves once, in order."""
        check(m, ~self.w_en | self.w_rdy, "written while full")
        if not self.buffered:
            check(m, ~self.r_en | self.r_rdy, "read while empty")
        held_until_taken(m, self.r_rdy, self.r_en, self.r_data, "head")
        order_kept(m, self.w_en, self.w_data, self.r_en & self.r_rdy, self.r_data, level,
                   self.capacity, "queue", peek)
