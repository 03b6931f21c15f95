"""Pricing points: the performance model at the size asked for (GB/s, *modelled*), the kernel's
resources composed from its distinct blocks (*estimated*, Yosys xcup), the floorplan with those
estimates (*planned*), and the deepest block in LUT levels (the timing mark)."""

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from amaranth.hdl import Fragment

from ...core.block_figures import Utilization
from ...core.boards import HBM_BOARDS
from ...hardware.block import module_name
from ...hardware.kernel.kernel import port_register_slice
from ..perf.model import estimate
from ..qor.blocks import TOP, compose, kernel_bill
from ..qor.figures import source_digest

__all__ = ["PricedPoint", "price_points", "TIMING_LEVELS", "DISTRIBUTIONS"]

# The presets' deepest block (the u280 kernel's tree controller): a point deeper than this
# is marked as a timing risk at its clock.
TIMING_LEVELS = 6
DISTRIBUTIONS = ("random", "sorted")    # a point's speed is the slower of these by default


@dataclass(frozen=True)
class PricedPoint:
    """One configuration, priced. ``gbps``: per input order, modelled at ``records``;
    ``usage``: the kernel's estimated cells (register slices as its floorplan places them);
    ``share``: its LUTs as a share of the device (None for a board without device figures);
    ``levels``/``deepest``: the deepest block's LUT levels and name; ``plan``: the floorplan
    (None: no dies, or none fits); ``marks``: why it does not fit, or what to watch."""

    config: object
    records: int
    gbps: dict
    bound: str
    phases: dict            # the slowest order's phase 1 and phase 2, GB/s each
    usage: Utilization
    share: float
    levels: int
    deepest: str
    plan: object
    marks: tuple
    fits: bool

    @property
    def speed(self):
        """The slowest of the input orders priced: what the point promises whatever the
        data."""
        return min(self.gbps.values())


def records_for(config, size):
    """Records a point sorts for ``size`` bytes: all of them, or (when they fill its channels
    but for the room each keeps beside its half) its capacity; None when they do not fit."""
    records = size // config.record_bytes
    if records <= config.capacity:
        return records
    if size <= config.trees * config.channel_bytes:
        return config.capacity
    return None


def _hardware(config):
    """The configuration the kernel's hardware follows from: name and clock do not change it."""
    board = HBM_BOARDS[config.board]
    return dataclasses.replace(config, name="explore", clock_hz=board.clock_hz)


def _bill(hw, cache, blocks=False):
    """The bill of materials of kernel ``hw`` as plain data (groups, each name's module, each
    module's identity, the module of its ports' register slices per stage count), kept in
    ``cache`` (``<cache>/bills``) for this source of the hardware; with ``blocks``, a census
    again and ``{module: block}``."""
    key = hashlib.sha256(f"{hw!r}\0{source_digest()}".encode()).hexdigest()[:20]
    path = Path(cache) / "bills" / f"{key}.json" if cache else None
    if path is not None and path.exists():
        return json.loads(path.read_text())
    bill = kernel_bill(hw, port_stages=(0,) * hw.trees)
    found = {bill.modules[name]: block for name, block in bill.blocks.items()}
    slices = {}
    # Register slices the floorplan may ask for: 2 stages per die crossed.
    for stages in range(0, max(2, 2 * len(HBM_BOARDS[hw.board].slrs)), 2):
        block = port_register_slice(hw, stages)
        Fragment.get(block, None)       # (elaborated: a block made only to be named)
        slices[str(stages)] = module_name(block, TOP)
        found[slices[str(stages)]] = block
    if blocks:
        return found
    summary = {"groups": bill.groups, "modules": bill.modules, "slices": slices,
               "identities": {m: b.block_identity for m, b in found.items()}}
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(summary) + "\n")
    return summary


def price_points(configs, size, figures, budget=0.65, distributions=DISTRIBUTIONS,
                 progress=None):
    """Price ``configs`` for ``size`` bytes with block ``figures`` (a
    :class:`~.figures.BlockFigures`); ``budget``: the device's LUT share a point may take.
    Returns ``(priced, unpriced)``: :class:`PricedPoint` per configuration that holds the
    size, and ``{name: reason}`` for the others."""
    from ...targets.vitis.floorplan import DIE_FILL, plan_floorplan

    progress = progress or (lambda line: None)
    unpriced, models = {}, {}
    for config in configs:
        records = records_for(config, size)
        if records is None:
            unpriced[config.name] = (f"holds {config.trees * config.channel_bytes >> 20} MB "
                                     f"at most")
            continue
        runs = {d: estimate(config, records, "measured", d) for d in distributions}
        models[config.name] = (records, runs)
    kept = [c for c in configs if c.name in models]
    hardware = {}
    for config in kept:
        hardware.setdefault(_hardware(config), []).append(config)
    progress(f"{len(configs)} points, {len(kept)} hold the size: {len(hardware)} distinct "
             f"kernels to count")
    bills = {}
    for number, hw in enumerate(hardware, 1):
        bills[hw] = _bill(hw, figures.cache)
        if number % 10 == 0 or number == len(hardware):
            progress(f"counted the blocks of {number}/{len(hardware)} kernels")
    wanted = {m: i for bill in bills.values() for m, i in bill["identities"].items()}
    results = figures.results(wanted)
    missing = [hw for hw, bill in bills.items() if set(bill["identities"]) - set(results)]
    if missing:
        # Blocks never synthesised with this source: the bills again, with the blocks.
        blocks = {}
        for hw in missing:
            blocks.update(_bill(hw, None, blocks=True))
        progress(f"{len(set(blocks) - set(results))} blocks not in the cache: writing and "
                 f"synthesising them")
        results.update(figures.results({m: b for m, b in blocks.items() if m not in results}))
    priced = []
    for hw, points in hardware.items():
        bill = bills[hw]
        modules, slices = bill["modules"], bill["slices"]
        usage = {name: results[module].utilization for name, module in modules.items()}
        ports = set(bill["groups"]["register slices"])
        groups = compose({**bill["groups"], "kernel": [
            name for name in bill["groups"]["kernel"] if name not in ports]}, usage)
        board = HBM_BOARDS[hw.board]
        plan, marks = None, []
        if board.slrs:
            try:
                plan = plan_floorplan(hw, board, groups["phase-1 tree"].resources(),
                                      groups["reused tree"].resources(),
                                      groups["phase-2 extras"].resources(),
                                      utilization=DIE_FILL)
            except ValueError:
                marks.append(f"does not floorplan at {DIE_FILL:.0%} dies")
        kernel = groups["kernel"]       # without its ports' register stages, added here
        for stages in plan.stages if plan else (0,) * hw.trees:
            kernel = kernel + results[slices[str(stages)]].utilization
        part = board.part_resources
        share = kernel.luts / part.lut if part.lut else None
        if share is not None and share > budget:
            marks.append(f"over the {budget:.0%} LUT budget")
        fits = not marks
        deepest = max(modules, key=lambda name: results[modules[name]].levels.lut)
        levels = results[modules[deepest]].levels.lut
        if levels > TIMING_LEVELS:
            marks.append(f"timing risk: {levels} LUT levels ({deepest})")
        for config in points:
            records, runs = models[config.name]
            slowest = max(runs.values(), key=lambda e: e.total.cycles)
            phases = {"phase1": slowest.phase1.gbps, "phase2": slowest.phase2.gbps}
            priced.append(PricedPoint(config, records,
                                      {d: e.total.gbps for d, e in runs.items()},
                                      slowest.bound(), phases,
                                      kernel, share, levels, deepest, plan, tuple(marks), fits))
    return priced, unpriced
