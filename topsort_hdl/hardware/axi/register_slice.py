"""AXI4 register slices: pipeline stages for a port whose master sits on another die."""


from amaranth.asserts import AnyConst
from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, fifo
from amaranth.lib.wiring import In, Out

from ...core.axi_params import AXI4_CHANNELS
from ..block import Block
from ..properties import check, held_until_taken, is_formal
from ..records import check_range
from .signature import Axi4Signature, AxiParams

__all__ = ["AxiRegisterSlice", "credit_depth"]

def credit_depth(stages):
    """Entries of the receiving FIFO of a channel with backpressure over ``stages`` stages.

    A credit is out from the cycle a transfer is taken to the cycle its return reaches the
    sender: ``stages`` cycles forward, one in the FIFO, one to pop it, ``stages`` back. With
    that many entries the sender never waits for a credit while the receiver takes a transfer
    every cycle."""
    return 2 * stages + 2


# Stage registers stay flip-flops, never shift registers: an SRL would fold the stages into one
# LUT site, where they are meant to be placed one by one along the way across the dies
# (``shreg_extract`` for Vivado; Yosys keeps a ``keep`` wire out of its shift registers).
STAGE_ATTRS = {"shreg_extract": "no", "keep": "true"}


def _stage_register(width, name, *, payload=False):
    """A stage register; a payload one has no reset and no enable (one flip-flop per bit, no
    LUT)."""
    return Signal(width, name=name, reset_less=payload, attrs=STAGE_ATTRS)


def _forward_pipeline(m, source, sink, stages, name):
    """``stages`` registers on VALID and the payload; the source sees READY always high.

    For a receiver that is always ready: no READY path, no skid, no multiplexer (payload
    registers load every cycle). Returns the overrun flag: the receiver was not ready for a
    transfer, which is lost."""
    valid, _, payload = source
    sink_valid, sink_ready, sink_payload = sink
    for stage in range(stages):
        next_valid = _stage_register(1, f"{name}{stage}_valid")
        next_payload = _stage_register(len(payload), f"{name}{stage}_data", payload=True)
        m.d.sync += [next_valid.eq(valid), next_payload.eq(payload)]
        valid, payload = next_valid, next_payload
    m.d.comb += [source[1].eq(1), sink_valid.eq(valid), sink_payload.eq(payload)]
    return sink_valid & ~sink_ready


def _credit_pipeline(m, source, sink, stages, name, formal=False):
    """Backpressure over ``stages`` stages without a skid buffer per stage.

    VALID and the payload go through ``stages`` plain registers into a FIFO at the receiving
    end (:func:`credit_depth` entries, distributed RAM); each transfer the receiver takes
    returns a credit through ``stages`` registers to a counter at the sending end, whose
    source is ready while it holds a credit. The FIFO cannot overflow (a transfer is only
    taken with a credit, and there are as many credits as entries), and with a credit per
    cycle of the round trip the channel passes a transfer every cycle. READY and VALID are
    registered at both ends: the sink's VALID is the FIFO's non-empty flag, the source's READY
    a flag set with the counter."""
    valid, ready, payload = source
    sink_valid, sink_ready, sink_payload = sink
    depth = credit_depth(stages)
    credits = Signal(range(depth + 1), init=depth, name=f"{name}_credits")
    # READY is a flip-flop of its own, set with the count: the sender's issue logic behind
    # it then starts at a register, not at a compare of the counter.
    has_credit = Signal(init=1, name=f"{name}_has_credit")
    taken = Signal(name=f"{name}_taken")
    m.d.comb += [ready.eq(has_credit), taken.eq(valid & ready)]

    buffer = m.submodules[f"{name}_fifo"] = fifo.SyncFIFO(width=len(payload), depth=depth)
    forward_valid, forward_payload = taken, payload
    stage_valids, stage_credits = [], []
    returned = Signal(name=f"{name}_returned")
    m.d.comb += returned.eq(buffer.r_rdy & buffer.r_en)
    for stage in range(stages):
        next_valid = _stage_register(1, f"{name}{stage}_valid")
        next_payload = _stage_register(len(payload), f"{name}{stage}_data", payload=True)
        # (named after the stage it sits beside: the first one is at the receiving end)
        next_returned = _stage_register(1, f"{name}{stages - 1 - stage}_credit")
        m.d.sync += [next_valid.eq(forward_valid), next_payload.eq(forward_payload),
                     next_returned.eq(returned)]
        forward_valid, forward_payload, returned = next_valid, next_payload, next_returned
        stage_valids.append(next_valid)
        stage_credits.append(next_returned)
    # (the flag a LUT after ``taken``, which comes from the sender's logic: not the sum's
    # carry chain and a compare after it)
    m.d.sync += [credits.eq(credits - taken + returned),
                 has_credit.eq(returned | Mux(taken, credits > 1, credits != 0))]
    # (the FIFO's write side is no stream: the credits keep it from overflowing; its read
    # side is the receiver's channel)
    m.d.comb += [buffer.w_en.eq(forward_valid), buffer.w_data.eq(forward_payload),
                 sink_valid.eq(buffer.r_rdy), sink_payload.eq(buffer.r_data),
                 buffer.r_en.eq(sink_ready)]
    if formal:
        # Every credit is somewhere: at the sender, a transfer on its way, an entry of the
        # FIFO or a credit on its way back; so the FIFO never overflows.
        check(m, credits + sum(stage_valids) + buffer.level + sum(stage_credits) == depth,
              f"{name}: credits lost or made")
        check(m, ~buffer.w_en | buffer.w_rdy, f"{name}: a transfer into a full FIFO")
        check(m, has_credit == (credits != 0), f"{name}: READY is not the credit count's")
        _order_properties(m, taken, payload, sink_valid & sink_ready, sink_payload, name)


def _order_properties(m, take_in, data_in, take_out, data_out, name):
    """What the sender hands over leaves at the receiver once, in order, unchanged (an entry the
    solver chooses, numbered as it enters and as it leaves)."""
    entered, left, chosen = (Signal(8, name=f"{name}_{n}") for n in ("entered", "left",
                                                                     "chosen"))
    chosen_data = Signal(len(data_in), name=f"{name}_chosen_data", reset_less=True)
    m.d.comb += chosen.eq(AnyConst(8))
    m.d.sync += [entered.eq(entered + take_in), left.eq(left + take_out)]
    with m.If(take_in & (entered == chosen)):
        m.d.sync += chosen_data.eq(data_in)
    check(m, ~take_out | (left != entered), f"{name}: a transfer left that never entered")
    with m.If(take_out & (left == chosen)):
        check(m, data_out == chosen_data, f"{name}: a transfer left changed or out of order")


def _connect(m, source, sink):
    """No stage: the sink's VALID and payload are the source's, the source's READY the sink's."""
    (valid, ready, payload), (sink_valid, sink_ready, sink_payload) = source, sink
    m.d.comb += [sink_valid.eq(valid), ready.eq(sink_ready), sink_payload.eq(payload)]


class AxiRegisterSlice(Block):
    """``stages`` register stages on every channel of an AXI4 port (AW, W, AR toward the
    subordinate, R and B back), so a port that crosses dies can be placed stage by stage along
    its way (the paper: two stages per die crossed). Every signal that crosses is registered
    at every stage, and every channel passes a transfer every cycle. Zero stages: a plain
    connection.

    A channel named in ``always_ready`` gets forward registers only: its receiver must keep
    READY high, and the slice drives the sender's READY high. ``overrun`` flags a transfer
    that reached such a receiver while its READY was low (the transfer is lost); the kernel
    reports it as an error. The other channels keep backpressure, through a FIFO at the
    receiving end with credits returned to the sending end (see :func:`credit_depth`).

    Cost (Yosys ``synth_xilinx -family xcup``, the u280 port: 512-bit data, R and B always
    ready): 507 LUTs (448 of them distributed RAM: the FIFOs) and 1,326 FFs at one stage,
    then about 5 LUTs and 1,302 FFs per further stage, where a full skid buffer on every
    channel cost 1,313 LUTs and 2,586 FFs per stage. The credit FIFO was measured against a
    skid buffer per stage on the backpressured channels too: cheaper at 1, 2 and 4 stages on
    W (355 LUTs and 589 FFs against 582 and 1,156 at one stage) and on AW and AR.

    Parameters
    ----------
    params : AxiParams
    stages : int
        Register stages, 0 to 16.
    always_ready : iterable of str
        Channels (keys of :data:`~topsort_hdl.core.axi_params.AXI4_CHANNELS`) whose
        receiver is always ready.

    Members
    -------
    s : In(Axi4Signature(params))
        Toward the master (the kernel's engines).
    m : Out(Axi4Signature(params))
        Toward the subordinate (the memory).
    overrun : Out(StructLayout({channel: 1}))
        Per channel, a transfer lost: its receiver, meant to be always ready, was not.
    """

    module_tag_format = "register_slice_s{stages}"

    def __init__(self, params, stages, *, always_ready=()):
        if not isinstance(params, AxiParams):
            raise TypeError(f"params must be an AxiParams, not {params!r}")
        check_range("stages", stages, 0, 16)
        always_ready = tuple(always_ready)
        for ch in always_ready:
            if ch not in AXI4_CHANNELS:
                raise ValueError(f"always_ready names AXI channels ({', '.join(AXI4_CHANNELS)}), "
                                 f"not {ch!r}")
        self.params = params
        self.stages = stages
        self.always_ready = frozenset(always_ready)
        super().__init__({
            "s": In(Axi4Signature(params)),
            "m": Out(Axi4Signature(params)),
            "overrun": Out(data.StructLayout({ch: 1 for ch in AXI4_CHANNELS})),
        })

    def elaborate(self, platform):
        m = Module()
        for ch, (fields, forward) in AXI4_CHANNELS.items():
            ends = [(getattr(port, f"{ch}valid"), getattr(port, f"{ch}ready"),
                     Cat(getattr(port, ch + f) for f in fields)) for port in (self.s, self.m)]
            source, sink = ends if forward else ends[::-1]
            if not self.stages:
                _connect(m, source, sink)
            elif ch in self.always_ready:
                m.d.comb += getattr(self.overrun, ch).eq(
                    _forward_pipeline(m, source, sink, self.stages, ch))
            else:
                _credit_pipeline(m, source, sink, self.stages, ch, formal=is_formal(platform))
            if is_formal(platform):
                # (every channel's receiver sees the rules kept, given a sender that keeps them)
                held_until_taken(m, *sink, f"{ch}_out")
                if ch in self.always_ready:
                    check(m, ~getattr(self.overrun, ch),
                          f"{ch}: a transfer lost though its receiver is always ready")
        return m
