"""The performance model: cycles per pass and per phase for any configuration and record count.

It walks the same plan the hardware computes (:mod:`topsort_hdl.core.plan`: passes, tuned
last pass, spread active leaves, every leaf's region) and charges each pass what the RTL was
seen to spend (``make profile`` and cycle traces of the kernel):

- **streaming**: the longer of reading the pass's beats (one beat per cycle on the tree's port)
  and merging its records at the tree's rate. With random keys every leaf's run drains in
  proportion to its length, and a leaf gives at most one record per cycle and a merge unit its
  rate, so a subtree holding more of the records than of the rate holds the tree back: a pass
  with ``a < p`` active leaves merges at ``a`` (the paper's Figure 7 effect). The memory can
  slow it further (below);
- **start-up**: a merge needs data from every active leaf, and the read engine serves one
  leaf's burst at a time, so the tree starts about one burst per active leaf after the first
  read and stays that far behind its reader. Bursts are aligned, so a leaf whose region starts
  just before a boundary gets a short first burst; it runs dry before its second burst comes
  round and the whole tree waits for it;
- **write tail**: the write engine stores a burst before it sends it, so after the last record
  the final burst goes out and its response comes back;
- **control**: the controller's per-pass steps, one leaf command per cycle.

Phase 2 is one pass of the wide tree: every reused tree's port reads its group's runs with the
long phase-2 bursts, and the ports feed one tree of ``r*p`` records per cycle. With random keys
the ports' leaves do not drain evenly: the measured loss is the ``PHASE2_BALANCE`` factor.

The input's order (``distribution``, one of ``DISTRIBUTIONS``). Phase 1 does not see it: a pass
merges run g of every leaf's block, runs that lie a block apart in the tree's input, so the
runs of a group interleave in key range for sorted and reversed input as for random (the RTL
agrees, pass for pass). Phase 2 sees it through the placement: with the input ``dealt`` (record
k to tree k % T) every tree holds a sample of the whole input and phase 2's runs interleave
too; in ``blocks`` (tree i gets the i-th block, the paper's) sorted or reversed input gives
tree i's runs the i-th key range alone, so phase 2 drains the trees one after another, each
through its F leaves: at most the rate of the subtree over those leaves (2 records per cycle
when F = 4, whatever r*p is). Nearly sorted input (``NEARLY_SORTED_FRACTION`` of the keys
anywhere) is the same with a sprinkle of every other tree.

Memory: ``ideal`` (one beat per cycle per port, what the simulations' AXI RAM gives),
``peak`` (the board's per-channel figure) or ``measured`` (its measured sequential-burst
figure). A tree reads one channel and writes another, so in phase 1 it is memory-bound when
``p * record_bytes * clock`` exceeds a channel's bandwidth; in phase 2 each port's reads are
bounded the same way, and by the HBM switch's lateral links (:func:`lateral_rate`): tree i's
master sits at channel 2i's switch port, and a phase-2 port reaches its group's channels in
other switches over links that each carry ``lateral_fraction`` of a channel's bandwidth each
way (PG276: half), shared by masters M0 and M1 or M2 and M3. The paper's layout loads each link
it uses with half of one port's traffic: exactly a link's worth, no loss. The extra latency
of a hop is hidden by the bursts in flight. Not modelled: HBM refresh and page effects.

The latency constants were fitted to RTL cycle counts of ``tiny`` and ``small``; ``make qor``
re-measures those sorts and fails when the model is more than 5% off any of them.

"""

import math
from collections import defaultdict
from dataclasses import dataclass

from ...core.boards import HBM_BOARDS
from ...core.golden.workloads import INPUT_ORDERS, NEARLY_SORTED_FRACTION
from ...core.plan import ceil_div, leaf_regions, phase2_leaves, tree_plans
from ...core.tree_shape import extra_rates, tree_rates

__all__ = ["MEMORY_MODELS", "DISTRIBUTIONS", "PassEstimate", "PhaseEstimate", "Estimate",
           "estimate", "tree_rate", "lateral_rate", "PHASE2_BALANCE"]

MEMORY_MODELS = ("ideal", "peak", "measured")
DISTRIBUTIONS = INPUT_ORDERS        # the input's order: random, sorted, reversed, ...

# Fitted to the RTL (see the module docstring); cycles unless said otherwise.
# The controller and the engines register their commands and burst decisions (so that no
# control path is critical): a pass pays the controller's steps DECIDE, ACTIVE, SIZE, SIZE2,
# SIZE3, the leaf pipeline's fill (4) and the step into WAIT, then one cycle per leaf; a
# command reaches AR four cycles later than when it was decoded combinationally (two decode
# steps, the registered burst length and room) and one more for the registered AR grant; a
# beat leaves the engine's buffer three cycles after it arrives (the memory's data is
# registered); a feeder starts a command a cycle after it takes it; a write burst is decided a
# cycle ahead.
PASS_CONTROL = 10           # the controller's per-pass steps (then one per leaf)
READ_LATENCY = 15           # command to first beat through the read engine and leaf feeder
TREE_LATENCY = 8            # extra root latency per tree level
WRITE_LATENCY = 11          # last word to the write engine's final response, besides the burst
PHASE1_START = 2            # ap_start handling to the first pass
PRESORT_STEPS = 5           # the controller's presort decision (once a job), plus 2 a shift
PHASE2_START = 8            # start_phase2 to the first leaf command (the leaf pipeline's fill)
PHASE2_BALANCE = 0.95       # phase 2's merge rate with random keys, of r*p (measured on small)


@dataclass(frozen=True)
class PassEstimate:
    """One pass of one tree (``tree`` is None for phase 2)."""

    tree: object
    records: int
    active: int             # active leaves
    rate: float             # records per cycle while streaming
    bound: str              # what sets the rate: "merge", "leaves" or "memory"
    beats_read: int
    lag: int
    tail: int
    cycles: int


@dataclass(frozen=True)
class PhaseEstimate:
    cycles: int
    seconds: float
    gbps: float             # bytes sorted per second of this phase


@dataclass(frozen=True)
class Estimate:
    """What the model predicts for sorting ``records`` records on ``config``."""

    config: object
    records: int
    memory: str
    distribution: str
    passes: int             # phase-1 passes of the busiest tree
    tree_passes: tuple      # per tree, its PassEstimates
    phase2_pass: PassEstimate
    phase1: PhaseEstimate
    phase2: PhaseEstimate
    total: PhaseEstimate
    memory_rate: float      # records per cycle one channel/port sustains (inf: ideal)

    @property
    def bytes(self):
        return self.records * self.config.record_bytes

    @property
    def slowest_tree(self):
        return max(range(len(self.tree_passes)),
                   key=lambda t: sum(p.cycles for p in self.tree_passes[t]))

    def bound(self):
        """'memory' when passes held back by the memory take most of the time (the slowest
        tree's and phase 2's), else 'compute' (the merge rate or the leaves)."""
        every = list(self.tree_passes[self.slowest_tree]) if self.tree_passes else []
        every.append(self.phase2_pass)
        memory = sum(p.cycles for p in every if p.bound == "memory")
        return "memory" if 2 * memory > sum(p.cycles for p in every) else "compute"


def memory_rate(config, memory):
    """Records per cycle one HBM channel (phase 1) or port (phase 2) sustains."""
    if memory not in MEMORY_MODELS:
        raise ValueError(f"memory must be one of {', '.join(MEMORY_MODELS)}, not {memory!r}")
    if memory == "ideal":
        return float("inf")
    board = HBM_BOARDS[config.board]
    gbps = board.channel_gbps if memory == "peak" else board.channel_gbps_measured
    return gbps * 1e9 / (config.record_bytes * config.clock_hz)


def lateral_rate(config, memory):
    """Records per cycle a phase-2 port moves when the HBM switch's lateral links are the limit
    (inf when none is crossed, or for the ideal memory): each link, one way, carries
    ``lateral_fraction`` of a channel; a port's reads and writes of group member j (1/S of its
    traffic each) cross every link between its switch and j's, on its lane (M0/M1 or M2/M3)."""
    board = HBM_BOARDS[config.board]
    if memory == "ideal" or board.lateral_fraction >= 1:
        return float("inf")
    group = board.channel_group
    loads = defaultdict(float)      # (lane, link, way, read or write): share of a port's rate
    for port in config.reused_trees:
        here, lane = divmod(2 * port, group)
        lane //= 2
        for member in range(port, port + config.group):
            there = 2 * member // group
            for kind in ("read", "write"):
                for link in range(min(here, there), max(here, there)):
                    loads[lane, link, there > here, kind] += 1 / config.group
    worst = max(loads.values(), default=0.0)
    return board.lateral_fraction * memory_rate(config, memory) / worst if worst else float("inf")


def _beats(first_byte, end_byte, beat):
    return ceil_div(end_byte, beat) - first_byte // beat if end_byte > first_byte else 0


def _first_bursts(first_byte, end_byte, beat, burst):
    """Beats of a region's first and second bursts (bursts are aligned to ``burst`` bytes,
    so a region that starts just before a boundary gets a short first burst)."""
    if end_byte <= first_byte:
        return 0, 0
    boundary = (first_byte // burst + 1) * burst
    first = _beats(first_byte, min(end_byte, boundary), beat)
    second = _beats(boundary, min(end_byte, boundary + burst), beat) if end_byte > boundary \
        else 0
    return first, second


def _start_up(bursts, shares, rate, records_per_beat, latency):
    """Cycles from the first read until the tree streams steadily: the read engine serves the
    active leaves' first bursts in turn, then their second ones; the tree starts once every
    leaf has data, and a leaf whose short first burst runs dry before its second burst
    arrives stalls the whole tree until it does (one record per leaf share of the rate)."""
    arrival, t = [], 0
    for first, _ in bursts:
        arrival.append(t)
        t += first
    start = (arrival[-1] if arrival else 0) + latency
    stall = 0.0
    for (first, second), share in zip(bursts, shares, strict=True):
        if second:
            drawn = rate * share / records_per_beat          # beats per cycle from this leaf
            runs_dry = start + first / drawn if drawn else float("inf")
            stall = max(stall, t + latency - runs_dry)
        t += second
    return start + int(stall)


def tree_rate(counts, rates):
    """Records per cycle a tree merges runs of ``counts`` records per leaf (random keys, so
    each leaf's run drains in proportion to its length): every leaf gives at most one record
    per cycle and every merge unit at most its rate (``rates``: per level, root first), so a
    subtree holding a larger share of the records than of the rate holds the whole tree back
    (few active leaves under one unit: the paper's Figure 7 effect)."""
    total = sum(counts)
    if not total:
        return float(rates[0])
    limit = float("inf")
    shares = [count / total for count in counts]
    for share in shares:                       # a leaf: one record per cycle
        if share:
            limit = min(limit, 1.0 / share)
    for rate in reversed(rates):
        shares = [a + b for a, b in zip(shares[::2], shares[1::2], strict=True)]
        for share in shares:
            if share:
                limit = min(limit, rate / share)
    return limit


def _stream(records, lanes, beats, leaf_rate, mem_rate):
    """Streaming cycles and the binding limit for ``records`` merged by a tree of ``lanes``
    records per cycle whose active leaves allow ``leaf_rate``, over ``beats`` read at one per
    cycle per port."""
    rate, bound = float(lanes), "merge"
    if leaf_rate < lanes:
        rate, bound = leaf_rate, "leaves"
    if mem_rate < rate:
        rate, bound = mem_rate, "memory"
    return max(beats, math.ceil(records / rate)), rate, bound


def _levels(leaves):
    return max(1, leaves.bit_length() - 1)


def _tail(config, out_bytes):
    # The writer's last burst, charged as a whole one even when it is short: the RTL's passes of
    # 64 and 65 records on tiny (two full bursts, or two and one beat) take the same time.
    beat = config.axi.beat_bytes
    burst_beats = config.write_burst_bytes // beat
    return min(ceil_div(out_bytes, beat), burst_beats) + WRITE_LATENCY


def _presort_latency(config):
    """With ``presort`` every beat passes the read engine's beat sorter (its entry register
    and its network's layers) on the way into the buffer, in every phase-1 pass."""
    if not config.presort:
        return 0
    layers = config.rate.bit_length() - 1
    return 1 + layers * (layers + 1) // 2


def _presort_steps(config, records):
    """The controller's presort decision: a tree of more than F records finds the reach of
    its passes from runs of a beat, a shift of two steps per pass (plan.presorts)."""
    if records <= config.runs_per_tree:
        return 0
    beat_runs, reach, shifts = ceil_div(records, config.rate), config.runs_per_tree, 0
    while reach < beat_runs:
        reach, shifts = reach * config.leaves, shifts + 1
    return PRESORT_STEPS + 2 * shifts


def _phase1_pass(config, tree, records, step, mem_rate):
    c = config
    beat = c.axi.beat_bytes
    size = c.record_bytes
    regions = leaf_regions(records, step, c.leaves)
    beats, bursts, counts = 0, [], []
    for first, count, _ in regions:
        counts.append(count)
        if count:
            start, end = first * size, (first + count) * size
            beats += _beats(start, end, beat)
            bursts.append(_first_bursts(start, end, beat, c.read_burst_bytes))
    leaf_rate = tree_rate(counts, tree_rates(c.rate, c.leaves))
    stream, rate, bound = _stream(records, c.rate, beats, leaf_rate, mem_rate)
    shares = [count / records for count in counts if count]
    lag = _start_up(bursts, shares, rate, beat // size,
                    READ_LATENCY + TREE_LATENCY * _levels(c.leaves) + _presort_latency(c))
    tail = _tail(c, records * size)
    cycles = PASS_CONTROL + c.leaves + lag + stream + tail
    return PassEstimate(tree, records, step.active, rate, bound, beats, lag, tail, cycles)


def _phase2_segments(config, rows, distribution):
    """Phase 2 as parts that run one after another: ``(records, per leaf the records it gives
    in that part)`` (see the module docstring on the input's order)."""
    counts = [count for row in rows for *_, count in row]
    if distribution in ("random", "few-distinct") or config.placement == "dealt":
        return [(sum(counts), counts)]
    trees = [tree for row in rows for tree, *_ in row]
    stray = NEARLY_SORTED_FRACTION if distribution == "nearly-sorted" else 0.0
    segments = []
    for home in range(config.trees):    # (reversed input takes them in the other order)
        part = [count * ((1 - stray) * (tree == home) + stray / config.trees)
                for count, tree in zip(counts, trees, strict=True)]
        segments.append((sum(part), part))
    return segments


def _phase2_pass(config, plans, records, mem_rate, distribution):
    c = config
    beat = c.axi.beat_bytes
    size = c.record_bytes
    rows = phase2_leaves(plans, c.reuse, c.leaves)
    counts = [count for row in rows for _, _, _, count in row]
    lanes = c.reuse * c.rate
    rates = extra_rates(c.rate, c.reuse) + tree_rates(c.rate, c.leaves)
    port_beats, port_bursts, port_shares = [], [], []
    for row in rows:
        beats, bursts, shares = 0, [], []
        for _, _, first, count in row:
            if count:
                start, end = first * size, (first + count) * size
                beats += _beats(start, end, beat)
                bursts.append(_first_bursts(start, end, beat, c.reuse_burst_bytes))
                shares.append(count / records)
        port_beats.append(beats)
        port_bursts.append(bursts)
        port_shares.append(shares)
    segments = _phase2_segments(c, rows, distribution)
    streaming, spent = 0.0, defaultdict(float)
    for part, leaf_counts in segments:
        if not part:
            continue
        leaf_rate = tree_rate(leaf_counts, rates)
        port = max(sum(leaf_counts[k * c.leaves:(k + 1) * c.leaves]) for k in range(c.reuse))
        rate, bound = float(lanes), "merge"
        if leaf_rate < rate:
            rate, bound = leaf_rate, "leaves"
        if mem_rate * part / port < rate:       # the busiest port's reads
            rate, bound = mem_rate * part / port, "memory"
        if len(segments) == 1:
            # The ports' leaves drain unevenly (random keys): one port at times cannot keep up.
            rate *= PHASE2_BALANCE
        streaming += part / rate
        spent[bound] += part / rate
    stream = max(max(port_beats), math.ceil(streaming))
    rate = records / stream if stream else float(lanes)
    bound = max(spent, key=spent.get) if spent else "merge"
    # (the beat sorter's few cycles are within the fitted phase-2 start-up)
    latency = READ_LATENCY + TREE_LATENCY * _levels(c.leaves * c.reuse)
    lag = max(_start_up(bursts, shares, rate, beat // size, latency)
              for bursts, shares in zip(port_bursts, port_shares, strict=True) if bursts)
    tail = _tail(c, c.batch_bytes if records * size > c.batch_bytes else records * size)
    cycles = PHASE2_START + c.leaves + lag + stream + tail
    active = sum(1 for count in counts if count)
    return PassEstimate(None, records, active, rate, bound, max(port_beats), lag, tail, cycles)


def _phase(config, records, cycles):
    seconds = cycles / config.clock_hz
    gbps = records * config.record_bytes / seconds / 1e9 if cycles else 0.0
    return PhaseEstimate(cycles, seconds, gbps)


def estimate(config, records, memory="measured", distribution="random"):
    """The model's :class:`Estimate` for ``records`` records on ``config``.

    ``memory``: "ideal", "peak" or "measured"; ``distribution``: the input's order, one of
    ``DISTRIBUTIONS`` (see the module docstring). Raises ValueError for a record count the
    configuration cannot hold.
    """
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {', '.join(DISTRIBUTIONS)}, not "
                         f"{distribution!r}")
    if not isinstance(records, int) or records < 0:
        raise ValueError(f"records must be a non-negative integer, not {records!r}")
    if records > config.capacity:
        raise ValueError(f"records must be at most {config.name}'s capacity "
                         f"({config.capacity}), not {records}")
    mem_rate = memory_rate(config, memory)
    plans = tree_plans(config, records)
    tree_passes = tuple(
        tuple(_phase1_pass(config, tree, plan.records, step, mem_rate) for step in plan.passes)
        for tree, plan in enumerate(plans))
    phase1_cycles = PHASE1_START + max(
        (sum(p.cycles for p in passes) for passes in tree_passes), default=0)
    if config.presort and records:
        phase1_cycles += max(_presort_steps(config, plan.records) for plan in plans)
    if records:
        phase2 = _phase2_pass(config, plans, records,
                              min(mem_rate, lateral_rate(config, memory)), distribution)
    else:
        phase2 = PassEstimate(None, 0, 0, 0.0, "merge", 0, 0, 0, PHASE2_START)
    total = phase1_cycles + phase2.cycles
    return Estimate(config, records, memory, distribution, max(len(p.passes) for p in plans),
                    tree_passes,
                    phase2, _phase(config, records, phase1_cycles),
                    _phase(config, records, phase2.cycles), _phase(config, records, total),
                    mem_rate)
