"""AXI4 register slices: pipeline stages for a port whose master sits on another die."""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..records import check_range
from .signature import Axi4Signature, AxiParams

__all__ = ["AxiRegisterSlice", "CHANNELS"]

# Each channel's payload members, and whether it runs from master to subordinate.
CHANNELS = {
    "aw": (("id", "addr", "len", "size", "burst", "lock", "cache", "prot", "qos"), True),
    "w": (("data", "strb", "last"), True),
    "b": (("id", "resp"), False),
    "ar": (("id", "addr", "len", "size", "burst", "lock", "cache", "prot", "qos"), True),
    "r": (("id", "data", "resp", "last"), False),
}


def _skid_stage(m, valid, ready, payload, name):
    """One full register stage (valid, payload and ready all registered; a transfer every
    cycle): returns the stage's ``(valid, ready, payload)`` output side."""
    out_valid = Signal(name=f"{name}_valid")
    out_ready = Signal(name=f"{name}_ready")
    out_data = Signal(len(payload), name=f"{name}_data")
    skid_valid = Signal(name=f"{name}_skid_valid")
    skid_data = Signal(len(payload), name=f"{name}_skid_data")
    m.d.comb += ready.eq(~skid_valid)
    with m.If(out_ready | ~out_valid):           # the output register can take a new value
        with m.If(skid_valid):
            m.d.sync += [out_data.eq(skid_data), out_valid.eq(1), skid_valid.eq(0)]
        with m.Else():
            m.d.sync += [out_data.eq(payload), out_valid.eq(valid)]
    with m.Elif(valid & ~skid_valid):            # output held: keep the input's transfer
        m.d.sync += [skid_data.eq(payload), skid_valid.eq(1)]
    return out_valid, out_ready, out_data


class AxiRegisterSlice(wiring.Component):
    """``stages`` full register stages on every channel of an AXI4 port (AW, W, AR toward the
    subordinate, R and B back): each stage registers VALID, the payload and READY, and passes
    a transfer every cycle, so a port that crosses dies can be placed stage by stage along its
    way (the paper: two stages per die crossed). Zero stages: a plain connection.

    Members
    -------
    s : In(Axi4Signature(params))
        Toward the master (the kernel's engines).
    m : Out(Axi4Signature(params))
        Toward the subordinate (the memory).
    """

    def __init__(self, params, stages):
        if not isinstance(params, AxiParams):
            raise TypeError(f"params must be an AxiParams, not {params!r}")
        check_range("stages", stages, 0, 16)
        self.params = params
        self.stages = stages
        super().__init__({"s": In(Axi4Signature(params)), "m": Out(Axi4Signature(params))})

    def elaborate(self, platform):
        m = Module()
        for ch, (fields, forward) in CHANNELS.items():
            source, sink = (self.s, self.m) if forward else (self.m, self.s)
            valid = getattr(source, f"{ch}valid")
            ready = getattr(source, f"{ch}ready")
            payload = Cat(getattr(source, ch + f) for f in fields)
            for stage in range(self.stages):
                next_ready = Signal(name=f"{ch}{stage}_in_ready")
                out_valid, out_ready, out_data = _skid_stage(m, valid, next_ready, payload,
                                                             f"{ch}{stage}")
                m.d.comb += ready.eq(next_ready)
                valid, ready, payload = out_valid, out_ready, out_data
            m.d.comb += [
                getattr(sink, f"{ch}valid").eq(valid),
                ready.eq(getattr(sink, f"{ch}ready")),
                Cat(getattr(sink, ch + f) for f in fields).eq(payload),
            ]
        return m
