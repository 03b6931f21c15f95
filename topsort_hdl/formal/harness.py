"""A block's environment in a proof: reset in the first cycle only, inputs free within the
rules the block may rely on."""

from amaranth.asserts import AnySeq, Initial
from amaranth.hdl import Assume, Cat, Elaboratable, Module, ResetSignal, Signal, Value
from amaranth.lib.fifo import SyncFIFO

from ..hardware.properties import held_until_taken, runs_sorted, stream_rules

__all__ = ["Harness", "any_input", "channel_input", "stream_input", "sorted_runs_input",
           "any_ready", "axi_read_memory", "axi_write_memory"]


class Harness(Elaboratable):
    """``block`` with reset held in the first cycle and released for good, and the inputs
    ``environment(m, block)`` drives. Registers start undefined in a proof (the runner drops
    initial values), so whatever the block's properties read must come from reset."""

    def __init__(self, block, environment):
        self.block = block
        self.environment = environment

    def elaborate(self, platform):
        m = Module()
        m.submodules.block = self.block
        m.d.comb += Assume(ResetSignal() == Initial())
        self.environment(m, self.block)
        return m


def any_input(m, *signals):
    """Each of ``signals`` takes any value in every cycle."""
    for signal in signals:
        signal = Value.cast(signal)
        m.d.comb += signal.eq(AnySeq(len(signal)))


def channel_input(m, valid, ready, payload, name):
    """A valid/ready channel's sender: any payload, offered when it likes, held until taken."""
    any_input(m, valid, payload)
    held_until_taken(m, valid, ready, payload, name, kind=Assume)


def stream_input(m, port, name):
    """A ``lib.stream`` input with any payload, offered when it likes and held until taken."""
    any_input(m, port.valid, port.payload)
    stream_rules(m, port, name, kind=Assume)


def sorted_runs_input(m, port, name):
    """A :func:`stream_input` of bundles that carries sorted runs."""
    stream_input(m, port, name)
    runs_sorted(m, port, name, kind=Assume)


def any_ready(m, *ports):
    """Each output stream's receiver is ready when it likes (any backpressure)."""
    any_input(m, *(port.ready for port in ports))


def axi_read_memory(m, axi, bursts):
    """A memory on an AXI4 master's read channels: it takes a request when it likes (up to
    ``bursts`` unanswered) and answers each once, in the order taken, ARLEN + 1 beats of any
    data, OKAY, with any gaps between beats."""
    width = len(axi.arid) + len(axi.arlen)
    m.submodules.requests = requests = SyncFIFO(width=width, depth=bursts)
    ready, valid = Signal(), Signal()
    any_input(m, ready, valid, axi.rdata)
    beat = Signal.like(axi.arlen)
    head_id, head_len = requests.r_data[:len(axi.arid)], requests.r_data[len(axi.arid):]
    beat_taken = axi.rvalid & axi.rready
    m.d.comb += [
        axi.arready.eq(ready & requests.w_rdy),
        requests.w_en.eq(axi.arvalid & axi.arready),
        requests.w_data.eq(Cat(axi.arid, axi.arlen)),
        axi.rvalid.eq(valid & requests.r_rdy),
        axi.rid.eq(head_id),
        axi.rlast.eq(beat == head_len),
        axi.rresp.eq(0),
        requests.r_en.eq(beat_taken & axi.rlast),
    ]
    with m.If(beat_taken):
        m.d.sync += beat.eq(beat + 1)
        with m.If(axi.rlast):
            m.d.sync += beat.eq(0)


def axi_write_memory(m, axi, bursts):
    """A memory on an AXI4 master's write channels: it takes AW requests and W beats when it
    likes and answers each burst once (OKAY), any time after both its AW request and its
    WLAST beat are in, up to ``bursts`` answers owed."""
    ready_aw, ready_w, valid_b = Signal(), Signal(), Signal()
    any_input(m, ready_aw, ready_w, valid_b)
    width = bursts.bit_length() + 1
    requests, finished, answered = (Signal(width, name=n) for n in
                                    ("memory_aw", "memory_wlast", "memory_b"))
    m.d.comb += [
        axi.awready.eq(ready_aw & (requests - answered < bursts)),
        axi.wready.eq(ready_w),
        axi.bvalid.eq(valid_b & (requests != answered) & (finished != answered)),
        axi.bresp.eq(0),
    ]
    m.d.sync += [
        requests.eq(requests + (axi.awvalid & axi.awready)),
        finished.eq(finished + (axi.wvalid & axi.wready & axi.wlast)),
        answered.eq(answered + (axi.bvalid & axi.bready)),
    ]
