"""Where a tree's cycles go, pass by pass: a cocotb probe of the kernel's internals.

Runs one random job (TOPSORT_RECORDS records, ideal or pausing memory as in the kernel bench)
and samples, every cycle, tree TOPSORT_PROFILE_TREE's controller state, its port's AR, R and W
handshakes and its root's handshakes. Per pass it reports the cycles from the pass's first
command to its writer's last response, the beats moved, and where the time went: waiting for
the first read data, for the tree's first output, root stalls and bubbles, and the drain from
the last root beat to the end. The JSON goes to TOPSORT_STATS.
"""

import json
import os
import random

import cocotb
from cocotb.triggers import FallingEdge

from .cocotb_kernel import CONFIG, bring_up, check_sorted, sort_records
from .axi import Pauses

TREE = int(os.environ.get("TOPSORT_PROFILE_TREE", "1"))
PAUSE = float(os.environ.get("TOPSORT_PAUSE", "0"))
SEED = int(os.environ.get("TOPSORT_SEED", "1"))
# TreeController's FSM states, numbered by Amaranth in order of first mention (a reused
# tree's controller mentions PHASE2 third).
LEAVES, WAIT = (5, 6) if TREE in CONFIG.reused_trees else (4, 5)


def _fire(valid, ready):
    return int(valid.value) & int(ready.value)


async def _sample(dut, passes):
    datapath = dut.kernel.datapath
    control = getattr(datapath, f"controller{TREE}")
    packer = getattr(datapath, f"packer{TREE}")
    port = f"m{TREE:02d}_axi_"
    sig = {name: getattr(dut, port + name) for name in
           ("arvalid", "arready", "rvalid", "rready", "rlast", "wvalid", "wready", "bvalid")}
    cycle, current, outstanding, previous = 0, None, 0, 0
    while True:
        await FallingEdge(dut.ap_clk)
        cycle += 1
        state = int(control.fsm_state.value)
        if state != previous and os.environ.get("TOPSORT_PROFILE_TRACE"):
            dut._log.info("cycle %d: state %d -> %d", cycle, previous, state)
        if state == LEAVES and previous != LEAVES:
            current = {"start": cycle, "ar": 0, "r": 0, "w": 0, "root": 0, "first_r": None,
                       "first_root": None, "last_root": None, "root_stall": 0,
                       "memory_wait": 0, "ar_wait": 0, "last_r": None}
        if current is not None:
            ar = _fire(sig["arvalid"], sig["arready"])
            r = _fire(sig["rvalid"], sig["rready"])
            root = _fire(packer.i__valid, packer.i__ready)
            current["ar"] += ar
            if ar and os.environ.get("TOPSORT_PROFILE_TRACE"):
                dut._log.info("cycle %d: AR id %d len %d", cycle,
                              int(getattr(dut, port + "arid").value),
                              int(getattr(dut, port + "arlen").value))
            current["r"] += r
            current["w"] += _fire(sig["wvalid"], sig["wready"])
            current["root"] += root
            if r and current["first_r"] is None:
                current["first_r"] = cycle
            if root:
                if current["first_root"] is None:
                    current["first_root"] = cycle
                current["last_root"] = cycle
            if int(packer.i__valid.value) and not int(packer.i__ready.value):
                current["root_stall"] += 1
            if r:
                current["last_r"] = cycle
            elif outstanding:
                current["memory_wait"] += 1     # bursts in flight, no data
            elif int(sig["arvalid"].value):
                current["ar_wait"] += 1         # a burst asked for, not yet accepted
            outstanding += ar - (r and int(sig["rlast"].value))
            if previous == WAIT and state != WAIT:
                current["end"] = cycle
                passes.append(current)
                current = None
        previous = state


@cocotb.test()
async def profile_a_job(dut):
    rng = random.Random(SEED + 3)
    device, _ = await bring_up(dut, Pauses(rng, PAUSE))
    passes = []
    cocotb.start_soon(_sample(dut, passes))
    count = int(os.environ.get("TOPSORT_RECORDS", CONFIG.capacity))
    records = [(rng.randrange(1 << 32), i) for i in range(count)]
    result = await sort_records(dut, device, records)
    check_sorted(records, result.output)
    rows = []
    for p in passes:
        cycles = p["end"] - p["start"]
        rows.append({**p, "cycles": cycles,
                     "to_first_r": (p["first_r"] or p["end"]) - p["start"],
                     "to_first_root": (p["first_root"] or p["end"]) - p["start"],
                     "root_span": (p["last_root"] or 0) - (p["first_root"] or 0) + 1,
                     "drain": p["end"] - (p["last_root"] or p["start"])})
        dut._log.info("pass: %s", rows[-1])
    with open(os.environ["TOPSORT_STATS"], "w") as out:
        json.dump({"records": count, "phase1_cycles": result.phase1_cycles,
                   "phase2_cycles": result.phase2_cycles, "passes": rows}, out, indent=1)
