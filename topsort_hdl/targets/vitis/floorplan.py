"""Which die each tree goes on: the paper's floorplan resource model (section V-D).

The per-tree figures it is fed are a preset's own when stored with it
(:func:`.floorplan_estimates`), else the paper's (:data:`PAPER_U280_ESTIMATES`).

Phase 2's extra merge units, its write engine and the control block stay on the HBM die (the
sorted output goes straight to HBM). Trees move to the other dies as far as the dies' resources
and the super long lines (SLLs) between dies allow: every tree above the HBM die brings its
whole AXI port across each boundary below it (a reused tree also its root output, which phase
2 merges on the HBM die). Among the placements that put the most trees off the HBM die, the
model prefers the most on the farthest die, then the reused trees low (their phase-2 outputs
travel less). A tree k dies above its port gets 2k register stages on it (the paper's rule).
"""

from dataclasses import dataclass

from ...core.boards import Resources

__all__ = ["Floorplan", "plan_floorplan", "DIE_FILL", "SLL_FILL", "axi_port_signals",
           "floorplan_tcl", "tree_cells", "PHASE2_CELLS", "CONTROL_CELL", "PAPER_U280_ESTIMATES"]


def axi_port_signals(params):
    """Wires of one AXI4 master port, both directions (what crosses a die boundary)."""
    return sum(bits for _, _, bits, _ in params.port_signals())


@dataclass(frozen=True)
class Floorplan:
    """``slr[i]``: tree i's die; ``stages[i]``: register stages on its AXI port; per die the
    resources used and per boundary (die b to b+1) the signals crossing it."""

    slr: tuple
    stages: tuple
    used: tuple
    crossing: tuple

    def trees_on(self, die):
        return [i for i, s in enumerate(self.slr) if s == die]


# The paper's U280 figures as its text gives them (Table III itself is not in our copy), LUTs
# only (the resource it runs short of; no per-tree FF or BRAM figure is given): a non-reused
# tree takes under 3% of the device (3% of 1,303,680 LUTs), a reused tree more (its 4 KB-burst
# buffers are LUT shift registers: twice assumed), phase 2's extra merge units "much more than
# a single tree" (three trees' worth assumed).
_TREE = Resources(lut=39_110)
PAPER_U280_ESTIMATES = {"tree": _TREE, "reused_tree": _TREE * 2, "phase2": _TREE * 3}


# The margins a plan keeps for routing: dies filled to 95% of their kernel resources (the density
# the paper routed at 214 MHz: its 2 / 6 / 8 split with its figures), SLLs to 85%.
DIE_FILL = 0.95
SLL_FILL = 0.85


def plan_floorplan(config, board, tree, reused_tree, phase2, *, utilization=0.9,
                   sll_fraction=SLL_FILL):
    """Place ``config``'s trees on ``board``'s dies. ``tree``, ``reused_tree`` and
    ``phase2`` are resource estimates; at most ``utilization`` of a die's kernel resources
    and ``sll_fraction`` of its SLLs are used (routability margins). Raises ``ValueError``
    when no placement fits."""
    dies = len(board.slrs)
    if dies == 0:
        raise ValueError(f"board {board.name} has no die resources to floorplan")
    hbm = board.hbm_slr
    reused = set(config.reused_trees)
    port = axi_port_signals(config.axi)
    root = config.data_width + 1                  # a reused tree's root bundle to phase 2
    wires = int(board.sll_per_crossing * sll_fraction)
    budgets = [slr * utilization for slr in board.slrs]
    budgets[hbm] = budgets[hbm] - phase2
    normal = [i for i in range(config.trees) if i not in reused]
    by_distance = sorted(range(dies), key=lambda d: -abs(d - hbm))     # farthest die first
    best = None
    # Counts per die of normal and reused trees; the search space is small (T <= 64).
    for counts in _splits(len(normal), dies):
        for rcounts in _splits(len(reused), dies):
            used = [tree * counts[d] + reused_tree * rcounts[d] for d in range(dies)]
            if not all(used[d].fits(budgets[d]) for d in range(dies)):
                continue
            crossing = []
            for b in range(dies - 1):
                above = range(b + 1, dies) if b >= hbm else range(0, b + 1)
                crossing.append(sum(counts[d] * port + rcounts[d] * (port + root)
                                    for d in above))
            if any(c > wires for c in crossing):
                continue
            off = sum(counts[d] + rcounts[d] for d in range(dies) if d != hbm)
            far = tuple(counts[d] + rcounts[d] for d in by_distance)
            key = (off, far, -sum(rcounts[d] * abs(d - hbm) for d in range(dies)))
            if best is None or key > best[0]:
                best = (key, counts, rcounts, used, crossing)
    if best is None:
        raise ValueError(f"{config.name} does not fit on {board.name}: no placement keeps "
                         f"every die within {utilization:.0%} of its kernel resources and "
                         f"{sll_fraction:.0%} of its SLLs")
    _, counts, rcounts, used, crossing = best
    slr = [hbm] * config.trees
    queue_n, queue_r = list(normal), sorted(reused)
    for d in by_distance:
        for _ in range(counts[d]):
            slr[queue_n.pop()] = d
        for _ in range(rcounts[d]):
            slr[queue_r.pop()] = d
    stages = tuple(2 * abs(s - hbm) for s in slr)
    return Floorplan(tuple(slr), stages, tuple(used), tuple(crossing))


def _splits(total, parts):
    """Every way to write ``total`` as ``parts`` non-negative counts."""
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _splits(total - first, parts - 1):
            yield (first, *rest)


def tree_cells(config, tree):
    """Cell paths of tree ``tree``'s logic, relative to the kernel's top: its merge tree (in
    the reuse switch for a reused tree), leaf feeders, read and write engines with their key
    transforms, packer and controller. Its port's register stages are left to the placer,
    along the way."""
    datapath, lane = "kernel/datapath", f"kernel/datapath/lane{tree}"
    reused = {t: i for i, t in enumerate(config.reused_trees)}
    cells = [f"{datapath}/reuse/tree{reused[tree]}" if tree in reused else f"{lane}/tree"]
    cells += [f"{lane}/{block}" for block in ("reader", "read_order", "writer", "write_order",
                                              "packer", "controller")]
    cells += [f"{lane}/feeder{j}" for j in range(config.leaves)]
    return cells


# Phase 2's logic and the control block: on the HBM die with the write ports.
PHASE2_CELLS = ("kernel/datapath/reuse/extra_*", "kernel/datapath/reuse/couple*",
                "kernel/datapath/phase2_packer", "kernel/datapath/phase2_order",
                "kernel/datapath/phase2_writer")
CONTROL_CELL = "kernel/registers"


def floorplan_tcl(config, board, plan, compute_unit, source="the paper's per-tree figures"):
    """The pre-opt_design Tcl: every tree's cells into its die's dynamic-region pblock, phase 2
    and the control block into the HBM die's. ``source`` says where the per-tree figures came
    from."""
    vitis = board.vitis[0]
    lines = [
        f"# Floorplan of the TopSort kernel on {board.name} (generated by topsort-hdl):",
        f"# the paper's resource model (topsort_hdl/targets/vitis/floorplan.py) with {source}.",
    ]
    for die in range(len(board.slrs)):
        lines.append(f"#   SLR{die}: trees {' '.join(map(str, plan.trees_on(die))) or '-'}"
                     + (" and phase 2" if die == board.hbm_slr else ""))
    lines += [
        "# Register stages per tree port: " + " ".join(map(str, plan.stages)),
        f"set top [get_cells -quiet {vitis.region}/{compute_unit}/inst]",
        "if {[llength $top] == 0} {",
        "    # Another shell: find the compute unit wherever its dynamic region is.",
        f"    set top [get_cells -hierarchical -filter {{NAME =~ */{compute_unit}/inst}}]",
        "}",
        "if {[llength $top] != 1} {",
        f"    error \"floorplan: cannot find {compute_unit}/inst in the design\"",
        "}",
    ]
    for die in range(len(board.slrs)):
        cells = [c for tree in plan.trees_on(die) for c in tree_cells(config, tree)]
        if die == board.hbm_slr:
            cells += [*PHASE2_CELLS, CONTROL_CELL]
        if not cells:
            continue
        lines.append(f"add_cells_to_pblock [get_pblocks {vitis.pblocks[die]}] [get_cells [list \\")
        lines += [f"    $top/{cell} \\" for cell in cells]
        lines.append("]]")
    return "\n".join(lines) + "\n"
