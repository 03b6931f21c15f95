"""The equivalence check proves what a refactor keeps and refuses what it changes: a counter
with a queue, its state moved into a sub-component under other names, is proven equal; the same
with one next-state bit changed is not."""

from amaranth.back import verilog
from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from topsort_hdl.analysis.equivalence import prove
from topsort_hdl.hardware.queue import RegisteredFlagsFIFO


class _Counter(wiring.Component):
    step: In(1)
    nine: Out(1)

    def elaborate(self, platform):
        m = Module()
        count = Signal(4)
        with m.If(self.step):
            m.d.sync += count.eq(count + 1)
        m.d.comb += self.nine.eq(count == 9)
        return m


class _Top(wiring.Component):
    """Counts the entries that leave a queue, and says when it has counted nine; ``nested``
    keeps the count in a sub-component (another hierarchy and other names, the same
    hardware); ``broken`` counts by two."""

    i: In(8)
    valid: In(1)
    o: Out(8)
    nine: Out(1)

    def __init__(self, nested=False, broken=False):
        self.nested, self.broken = nested, broken
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.submodules.queue = queue = RegisteredFlagsFIFO(shape=8, capacity=3, buffered=False)
        m.d.comb += [queue.i.payload.eq(self.i), queue.i.valid.eq(self.valid),
                     self.o.eq(queue.o.payload), queue.o.ready.eq(1)]
        left = queue.o.valid
        if self.nested:
            m.submodules.counter = counter = _Counter()
            m.d.comb += [counter.step.eq(left), self.nine.eq(counter.nine)]
        else:
            tally = Signal(4)
            with m.If(left):
                m.d.sync += tally.eq(tally + (2 if self.broken else 1))
            m.d.comb += self.nine.eq(tally == 9)
        return m


def _written(tmp_path, name, design):
    path = tmp_path / f"{name}.v"
    path.write_text(verilog.convert(design, name="top"))
    return path


def test_moved_state_is_proven_and_a_changed_next_state_is_not(tmp_path):
    before = _written(tmp_path, "before", _Top())
    for name, design, expected in (("nested", _Top(nested=True), True),
                                   ("broken", _Top(broken=True), False)):
        work = tmp_path / name
        work.mkdir()
        proven, summary, _ = prove(before, _written(tmp_path, name, design), "top", work)
        assert proven == expected, (name, summary)


def test_a_rename_rule_pairs_moved_state_by_name(tmp_path):
    """Without pairing Yosys's cells, the count moved into the sub-component proves only when
    a rule gives it its old name back."""
    from topsort_hdl.analysis.equivalence import _prove, renames_for

    before = _written(tmp_path, "before", _Top())
    after = _written(tmp_path, "after", _Top(nested=True))
    for name, rules, expected in (("named", [(r"counter\.count", "tally")], True),
                                  ("unnamed", [], False)):
        work = tmp_path / name
        work.mkdir()
        (work / "before.v").write_text(before.read_text())
        (work / "after.v").write_text(after.read_text())
        renames = renames_for(work, "top", rules)
        assert (("counter.count", "tally") in renames) == bool(rules)
        proven, summary = _prove(work, "top", False, renames)
        assert proven == expected, (name, summary)
