"""Where a kernel's cycles go, pass by pass: a cocotb probe of its internals.

Sorts TOPSORT_RECORDS records in TOPSORT_ORDER (one of ``INPUT_ORDERS``, random by default;
memory pausing with probability TOPSORT_PAUSE, default 0: ideal) and samples, every cycle,
tree TOPSORT_PROFILE_TREE's controller, its port's AR, R and W handshakes, and the words its
root packer hands its write engine (the phase-2 tree's words during phase 2). One row per
phase-1 pass of that tree and one for phase 2, as JSON in TOPSORT_STATS:

- ``cycles``: from the pass's first leaf command to its writer's last response (phase 2: the
  kernel's phase-2 cycles);
- ``r``, ``w``: beats read and written on the port; ``root``: words out of the root packer;
- ``first_root``: cycles until the first word (every leaf needs data first);
- ``root_span``: first to last word; ``root_span - root`` is the root's idle time;
- ``tail``: from the port's last read beat to the end (the tree finishing what is buffered,
  then the writer's last burst and response);
- ``memory_wait``: cycles with bursts in flight and no read data; ``ar_wait``: an AR waiting
  for the memory with nothing in flight; ``root_stall``: a word held up by the writer.
"""

import json
import os
import random

import cocotb
from cocotb.triggers import FallingEdge

from topsort_hdl.core.golden.workloads import make_input

from .axi_ram import Pauses
from .cocotb_kernel import CONFIG, bring_up, check_sorted, sort_records

TREE = int(os.environ.get("TOPSORT_PROFILE_TREE", "0"))
PAUSE = float(os.environ.get("TOPSORT_PAUSE", "0"))
SEED = int(os.environ.get("TOPSORT_SEED", "1"))
def _high(signal):
    value = signal.value
    return value.is_resolvable and int(value) == 1


class _Window:
    """The counts of one pass."""

    def __init__(self, name, cycle):
        self.row = {"pass": name, "start": cycle, "r": 0, "w": 0, "root": 0,
                    "first_root": None, "last_root": None, "last_r": None,
                    "root_stall": 0, "memory_wait": 0, "ar_wait": 0}

    def sample(self, cycle, r, w, root, root_stall, outstanding, ar_waiting):
        row = self.row
        row["r"] += r
        row["w"] += w
        row["root"] += root
        row["root_stall"] += root_stall
        if root:
            if row["first_root"] is None:
                row["first_root"] = cycle
            row["last_root"] = cycle
        if r:
            row["last_r"] = cycle
        elif outstanding:
            row["memory_wait"] += 1
        elif ar_waiting:
            row["ar_wait"] += 1

    def close(self, cycle):
        row = self.row
        start = row.pop("start")
        first, last = row.pop("first_root"), row.pop("last_root")
        last_r = row.pop("last_r")
        row.update({
            "cycles": cycle - start,
            "first_root": (first if first is not None else cycle) - start,
            "root_span": last - first + 1 if first is not None else 0,
            "tail": cycle - (last_r if last_r is not None else start),
        })
        return row


async def _sample(dut, rows):
    kernel = dut.kernel
    datapath = kernel.datapath
    lane = getattr(datapath, f"lane{TREE}")
    control = lane.controller
    roots = [lane.writer, datapath.phase2_writer]   # their inputs
    port = {name: getattr(dut, f"m{TREE:02d}_axi_{name}") for name in
            ("arvalid", "arready", "rvalid", "rready", "rlast", "wvalid", "wready")}
    # A pass runs from the cycle after its planner begins its leaves to the cycle its half
    # flips (its write is done).
    planner = control.planner
    cycle, outstanding, in_phase2, began, half = 0, 0, False, False, 0
    window, passes = None, 0
    while True:
        await FallingEdge(dut.ap_clk)
        cycle += 1
        previous_half, half = half, int(control.half.value)
        phase2 = _high(kernel.phase2)
        if began:
            window = _Window(passes, cycle)
            passes += 1
        if phase2 and not in_phase2:
            window = _Window("phase 2", cycle)
        if window is not None:
            root = roots[phase2]
            ar = _high(port["arvalid"]) and _high(port["arready"])
            r = _high(port["rvalid"]) and _high(port["rready"])
            window.sample(cycle, r, _high(port["wvalid"]) and _high(port["wready"]),
                          _high(root.i__valid) and _high(root.i__ready),
                          _high(root.i__valid) and not _high(root.i__ready),
                          outstanding, _high(port["arvalid"]))
            outstanding += ar - (r and _high(port["rlast"]))
            if (not phase2 and half != previous_half) or (in_phase2 and not phase2):
                rows.append(window.close(cycle))
                window = None
        in_phase2 = phase2
        began = _high(planner.begin_leaves)


@cocotb.test()
async def profile_a_job(dut):
    rng = random.Random(SEED + 3)
    device, _ = await bring_up(dut, Pauses(rng, PAUSE))
    rows = []
    cocotb.start_soon(_sample(dut, rows))
    count = int(os.environ.get("TOPSORT_RECORDS", CONFIG.capacity))
    order = os.environ.get("TOPSORT_ORDER", "random")
    records = make_input(rng, count, order, CONFIG.key_bits)
    result = await sort_records(dut, device, records)
    check_sorted(records, result.output)
    with open(os.environ["TOPSORT_STATS"], "w") as out:
        json.dump({"records": count, "order": order, "tree": TREE,
                   "phase1_cycles": result.phase1_cycles,
                   "phase2_cycles": result.phase2_cycles, "passes": rows}, out, indent=1)
