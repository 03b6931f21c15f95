"""A configuration's resource estimate: every distinct block through Yosys, then the kernel by
composition, as a share of the board's device; and each block's deepest path in LUT levels
(:mod:`.levels`), from the same synthesis."""

from dataclasses import dataclass, field

from ...core.boards import HBM_BOARDS
from .blocks import compose, kernel_bill
from .figures import BlockFigures

__all__ = ["ResourceEstimate", "estimate_resources", "resource_table", "PAPER_U280_UTILIZATION"]

# TopSort (FCCM'22) section VI on the U280, after Vivado place and route.
PAPER_U280_UTILIZATION = {"lut": 0.546, "ff": 0.355, "bram": 0.56, "tree_lut": 0.03}


@dataclass(frozen=True)
class ResourceEstimate:
    config: object
    blocks: dict            # name -> Utilization
    seconds: dict           # name -> Yosys seconds (as measured when it ran)
    cached: dict            # name -> whether this run took it from the cache
    groups: dict            # group -> Utilization (see blocks.compose)
    port_stages: tuple
    levels: dict = field(default_factory=dict)     # name -> Levels (the deepest paths)
    flows: dict = field(default_factory=dict)      # name -> the synthesis flow (synth.FLOWS)

    def fractions(self, name="kernel"):
        """Per resource kind, block or group ``name`` as a share of the whole device."""
        part = HBM_BOARDS[self.config.board].part_resources
        return self.groups[name].resources().fractions(part)


def estimate_resources(config, progress=None, figures=None):
    """Synthesise (or take from the cache) every part of ``config``'s emitted kernel (see
    :mod:`.blocks`) through ``figures`` (a :class:`~.figures.BlockFigures`, by default local
    processes and the QoR cache); return the estimate."""
    bill = kernel_bill(config, units=True)
    figures = figures or BlockFigures(progress=progress)
    found = figures.results({bill.modules[name]: block for name, block in bill.blocks.items()})
    blocks, seconds, cached, levels, flows = {}, {}, {}, {}, {}
    for name in bill.blocks:
        result = found[bill.modules[name]]
        blocks[name] = result.utilization
        seconds[name] = result.seconds
        cached[name] = result.cached
        levels[name] = result.levels
        flows[name] = result.flow
        if progress:
            took = "cached" if result.cached else f"{result.seconds:.0f} s"
            if result.flow != "default":
                took += f", {result.flow} flow"
            progress(f"  {config.name} {name:<26} {result.utilization.luts:>8} LUT "
                     f"{result.utilization.ff:>8} FF {result.levels.lut:>3} levels  [{took}]")
    return ResourceEstimate(config, blocks, seconds, cached, compose(bill.groups, blocks),
                            bill.port_stages, levels, flows)


def _row(name, usage, part, levels=None):
    share = usage.resources().fractions(part)
    percent = " ".join(f"{share[k]:>6.1%}" if k in share else f"{'-':>6}"
                       for k in ("lut", "ff", "bram", "uram"))
    depth = f" {levels.lut:>4}/{levels.cells}" if levels else ""
    return (f"{name:<24} {usage.luts:>9,} {usage.lut:>9,} {usage.lutram:>7,} {usage.srl:>6,} "
            f"{usage.ff:>9,} {usage.bram:>6g} {usage.uram:>5} {percent}{depth}")


DEEPEST = 3     # blocks whose deepest path the table names


def _deepest_lines(estimate):
    """The deepest blocks' paths: levels, first and last cell, the cells between."""
    levels = estimate.levels
    if not levels:
        return []
    deepest = sorted(levels, key=lambda name: (-levels[name].lut, -levels[name].cells, name))
    lines = ["", "levels: the deepest register-to-register path in LUT levels / in cells "
             "(carries, MUXF7/F8 too); ports count as registers"]
    for name in deepest[:DEEPEST]:
        path = levels[name].lut_path
        lines.append(f"  {name}: {levels[name].lut} LUT levels, {path} ({path.summary()})")
    return lines


def resource_table(estimate):
    c = estimate.config
    board = HBM_BOARDS[c.board]
    part = board.part_resources
    head = (f"{'block':<24} {'LUT':>9} {'logic':>9} {'LUTRAM':>7} {'SRL':>6} {'FF':>9} "
            f"{'BRAM':>6} {'URAM':>5} {'%LUT':>6} {'%FF':>6} {'%BRAM':>6} {'%URAM':>6}")
    levels = " levels" if estimate.levels else ""
    device = (f"% of the {board.part} ({part.lut:,} LUT, {part.ff:,} FF, {part.bram:g} RAMB36, "
              f"{part.uram} URAM288)"
              if part.lut else f"no device figures for board {board.name}")
    lines = [f"{c.name}: Yosys synth_xilinx -family xcup estimates (not Vivado's); {device}",
             head + levels]
    for name, usage in estimate.blocks.items():
        lines.append(_row(name, usage, part, estimate.levels.get(name)))
    lines += _deepest_lines(estimate)
    lines.append("")
    lines.append(f"{'kernel by composition':<24}" + head[24:])
    counts = {"phase-1 tree": c.trees - c.reuse, "reused tree": c.reuse}
    for name, usage in estimate.groups.items():
        label = f"{name} (each of {counts[name]})" if name in counts else name
        if name == "register slices":
            label = f"register slices ({sum(estimate.port_stages)})"
        lines.append(_row(label, usage, part))
    if part.lut:
        kernel = estimate.groups["kernel"].resources().fractions(part)
        tree = estimate.groups["phase-1 tree"].resources().fractions(part)
        region = estimate.groups["kernel"].resources().fractions(board.device)
        paper = PAPER_U280_UTILIZATION
        lines.append(f"ours: kernel {kernel['lut']:.1%} LUT, {kernel['ff']:.1%} FF, "
                     f"{kernel['bram']:.1%} BRAM, {kernel['uram']:.1%} URAM of the device "
                     f"({region['lut']:.1%} of the "
                     f"LUTs the shell leaves to kernels); a phase-1 tree {tree['lut']:.1%} LUT")
        lines.append(f"paper (U280, Vivado): kernel {paper['lut']:.1%} LUT, {paper['ff']:.1%} "
                     f"FF, {paper['bram']:.0%} BRAM; each non-reused tree under "
                     f"{paper['tree_lut']:.0%}")
    lines += _floorplan_lines(estimate)
    return lines


def _floorplan_lines(estimate):
    """Where the floorplan model would put the trees with these estimates, and with what
    generation uses (the stored figures, or the paper's)."""
    from ...targets.vitis.floorplan import DIE_FILL, plan_floorplan
    from ...targets.vitis.project import board_floorplan, floorplan_estimates

    c = estimate.config
    board = HBM_BOARDS[c.board]
    if not board.slrs:
        return []
    groups = estimate.groups
    try:
        plan = plan_floorplan(c, board, groups["phase-1 tree"].resources(),
                              groups["reused tree"].resources(),
                              groups["phase-2 extras"].resources(), utilization=DIE_FILL)
    except ValueError as error:
        return [f"floorplan with these estimates: none fits ({error})"]
    def split(plan):
        return " / ".join(str(len(plan.trees_on(die))) for die in range(len(board.slrs)))

    _, source = floorplan_estimates(c)
    try:
        generation = split(board_floorplan(c))
    except ValueError:
        generation = "none fits (store this estimate's figures: make figures)"
    dies = "/".join(str(die) for die in range(len(board.slrs)))
    return [f"floorplan with these estimates (95% dies): trees per SLR{dies} {split(plan)}; "
            f"generation, with {source}: {generation}"]
