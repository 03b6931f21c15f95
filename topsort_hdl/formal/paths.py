"""The handshake rule no bounded proof can state: a transfer's VALID never waits for its READY.

AXI4 and ``lib.stream`` forbid a source to wait for READY before it raises VALID; a VALID that
READY reaches through logic alone also makes a loop with any sink whose READY waits for VALID.
Whether a path exists is a property of the netlist, not of a run: this module asks Yosys for
the combinational cone of each VALID output of a block (flattened, registers and synchronous
memory reads cut, asynchronous ones followed) and reports every one that holds its own READY.

A handshake is a ``valid`` output and the ``ready`` input beside it in the block's signature:
``o.valid`` and ``o.ready`` of a stream, ``m_axi.arvalid`` and ``m_axi.arready`` of an AXI
channel.
"""

import re
import subprocess
import tempfile
from pathlib import Path

from amaranth.back import rtlil
from amaranth.lib import wiring

from .sby import TOOLS, tool

__all__ = ["handshakes", "valid_waiting_for_ready"]

# Every register cell of Yosys's internal library: a combinational path stops at one.
_REGISTERS = ("$dff", "$dffe", "$adff", "$adffe", "$sdff", "$sdffe", "$sdffce", "$aldff",
              "$aldffe", "$dffsr", "$dffsre", "$dlatch", "$adlatch", "$dlatchsr")
_COUNT = re.compile(r"(\d+) objects?\.")


def handshakes(component):
    """``{valid port: ready port}`` of ``component``: every output member whose name ends in
    ``valid`` with an input member beside it named the same with ``ready``, as ports of its
    RTLIL (path parts joined with ``__``)."""
    members = {tuple(map(str, path)): member.flow
               for path, member, _ in component.signature.flatten(component)}
    found = {}
    for path, flow in members.items():
        if flow == wiring.Out and path[-1].endswith("valid"):
            ready = (*path[:-1], path[-1][:-len("valid")] + "ready")
            if members.get(ready) == wiring.In:
                found["__".join(path)] = "__".join(ready)
    return found


def valid_waiting_for_ready(component):
    """The VALID ports of ``component``'s handshakes (:func:`handshakes`) that their READY
    reaches through combinational logic alone: empty when every VALID is a function of
    registers and other inputs only."""
    pairs = handshakes(component)
    if not pairs:
        return []
    cut = ",".join(_REGISTERS)
    # (a synchronous read port's data is a register: its cell goes, and the path with it)
    lines = ["read_rtlil design.il", "proc", "flatten", "delete t:$memrd_v2 r:CLK_ENABLE=1 %i",
             "opt_clean"]
    for index, (valid, ready) in enumerate(pairs.items()):
        lines.append(f"tee -q -o path{index}.txt select -count o:{valid} %ci*:-{cut} "
                     f"i:{ready} %i")
    with tempfile.TemporaryDirectory() as work:
        (Path(work) / "design.il").write_text(rtlil.convert(component, name="top"))
        (Path(work) / "paths.ys").write_text("\n".join(lines) + "\n")
        done = subprocess.run([tool(TOOLS["YOSYS"]), "-q", "-s", "paths.ys"],
                              cwd=work, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"Yosys could not trace the paths: {done.stderr.strip()[-500:]}")
        counts = [_COUNT.search((Path(work) / f"path{index}.txt").read_text())
                  for index in range(len(pairs))]
    if not all(counts):
        raise RuntimeError("Yosys did not count every handshake's cone")
    return [name for name, count in zip(pairs, counts, strict=True) if int(count.group(1))]
