"""Properties a block states about its ports and its state, built for formal proofs only.

A block adds them when it is elaborated for the ``"formal"`` platform, the convention
Amaranth's own FIFOs follow (``amaranth.lib.fifo`` asserts its level invariants there); any
other platform, the simulator and the Verilog writers see none of it. The proofs
(:mod:`topsort_hdl.formal`) start every register undefined and hold reset in the first cycle
only, so a property that holds proves the state it reads is defined by reset, not by an
initial value. A property is therefore checked from the first cycle after reset on.

What a block asserts it guarantees: its outputs' rules and its own invariants. What it needs
from its neighbours (an input stream's rules, sorted input runs) the proof's harness assumes;
a block may also assert a rule its caller must keep (no write to a full queue), which checks
the caller wherever the two are proven together.
"""

from amaranth.asserts import AnyConst
from amaranth.hdl import Assert, ResetSignal, Signal, Value

__all__ = ["FORMAL", "is_formal", "check", "held_until_taken", "stream_rules", "order_kept",
           "runs_sorted", "RunTally"]

FORMAL = "formal"


def is_formal(platform):
    """The block is being elaborated for a formal proof."""
    return platform == FORMAL


def check(m, condition, message, *, kind=Assert, src_loc_at=0):
    """``kind`` (``Assert``, ``Assume`` or ``Cover``) of ``condition`` in every cycle that is
    not a reset cycle. The proof reports it at the caller's line (``src_loc_at`` frames
    further up for a helper's callers)."""
    with m.If(~ResetSignal()):
        m.d.comb += kind(condition, message, src_loc_at=1 + src_loc_at)


def held_until_taken(m, valid, ready, payload, name, *, kind=Assert):
    """A transfer offered (``valid``) and not taken (``ready`` low) is offered again in the
    next cycle with the same ``payload``: the valid/ready rule of AXI4 and ``lib.stream``.
    Returns the register that says a transfer was left waiting in the previous cycle."""
    payload = Value.cast(payload)
    waiting = Signal(name=f"{name}_waiting")
    offered = Signal(len(payload), name=f"{name}_offered", reset_less=True)
    m.d.sync += [waiting.eq(valid & ~ready), offered.eq(payload)]
    with m.If(waiting):
        check(m, valid, f"{name}: VALID dropped before READY took the transfer", kind=kind)
        check(m, payload == offered, f"{name}: payload changed while waiting for READY",
              kind=kind)
    return waiting


def stream_rules(m, port, name, *, kind=Assert):
    """:func:`held_until_taken` for a ``lib.stream`` interface (``valid``, ``ready``,
    ``payload``)."""
    return held_until_taken(m, port.valid, port.ready, port.payload, name, kind=kind)


def order_kept(m, take_in, data_in, take_out, data_out, level, capacity, name, peek):
    """What enters a queue leaves it once, in order, unchanged; ``level`` counts the entries
    inside (the queue's own count) and ``peek(offset)`` is the data of the entry ``offset``
    places behind the head (the queue's own storage), so that an induction proof sees what
    the queue holds.

    Entries are numbered as they enter and as they leave, modulo a power of two above
    ``capacity``; the solver chooses any one number, and while that entry is inside, the
    queue holds it unchanged, and it leaves as it entered. Also asserted: nothing leaves an
    empty queue and the level never passes ``capacity``."""
    width = capacity.bit_length() + 1
    entered = Signal(width, name=f"{name}_entered")
    left = Signal(width, name=f"{name}_left")
    chosen = Signal(width, name=f"{name}_chosen")
    behind_head = Signal(width, name=f"{name}_chosen_behind_head")
    chosen_data = Signal(len(Value.cast(data_in)), name=f"{name}_chosen_data", reset_less=True)
    m.d.comb += [chosen.eq(AnyConst(width)), behind_head.eq(chosen - left)]
    m.d.sync += [entered.eq(entered + take_in), left.eq(left + take_out)]
    with m.If(take_in & (entered == chosen)):
        m.d.sync += chosen_data.eq(data_in)
    check(m, (entered - left)[:width] == level, f"{name}: level is entries in minus out")
    check(m, level <= capacity, f"{name}: more than {capacity} entries")
    check(m, ~take_out | (level != 0), f"{name}: an entry left an empty queue")
    with m.If(behind_head < level):
        check(m, peek(behind_head) == chosen_data, f"{name}: an entry changed inside")
    with m.If(take_out & (left == chosen)):
        check(m, data_out == chosen_data, f"{name}: an entry left changed or out of order")



def runs_sorted(m, port, name, *, kind=Assert):
    """A stream of bundles (``records``, ``last``) carries sorted runs: keys ascend within
    each bundle offered and from one bundle taken to the next of the same run (``last`` ends
    a run)."""
    records = port.payload.records
    previous_key = Signal.like(records[0].key, name=f"{name}_previous_key", reset_less=True)
    in_run = Signal(name=f"{name}_in_run")     # a bundle of the current run was taken
    with m.If(port.valid):
        for lower, upper in zip(records, records[1:], strict=False):
            check(m, lower.key <= upper.key, f"{name}: keys descend within a bundle",
                  kind=kind)
        with m.If(in_run):
            check(m, previous_key <= records[0].key, f"{name}: keys descend across bundles",
                  kind=kind)
    with m.If(port.valid & port.ready):
        m.d.sync += [previous_key.eq(records[-1].key), in_run.eq(~port.payload.last)]


class RunTally:
    """Counts, for one run and one record value the solver chooses (the same for every stream
    it tallies), the bundles of that run a stream of bundles carries and how often the value
    occurs in them. Runs are numbered by ``last`` flags modulo ``2 ** run_bits``."""

    def __init__(self, m, record, *, run_bits=3, count_bits=6):
        self.m, self.count_bits, self.run_bits = m, count_bits, run_bits
        self.run = Signal(run_bits, name="tally_run")
        self.record = Signal(record, name="tally_record")
        m.d.comb += [self.run.eq(AnyConst(run_bits)),
                     self.record.as_value().eq(AnyConst(record.size))]

    def tally(self, port, name):
        """Registers counting ``port``'s bundles of the chosen run and the chosen record in
        them (before this cycle's transfer), and this cycle's transfer's contribution."""
        m, payload = self.m, port.payload
        runs = Signal(self.run_bits, name=f"{name}_runs")
        bundles = Signal(self.count_bits, name=f"{name}_bundles")
        matches = Signal(self.count_bits, name=f"{name}_matches")
        here = Signal(range(len(payload.records) + 1), name=f"{name}_matches_here")
        taken = port.valid & port.ready
        m.d.comb += here.eq(sum(record.as_value() == self.record.as_value()
                                for record in payload.records))
        with m.If(taken):
            m.d.sync += runs.eq(runs + payload.last)
            with m.If(runs == self.run):
                m.d.sync += [bundles.eq(bundles + 1), matches.eq(matches + here)]
        return runs, bundles, matches, here
