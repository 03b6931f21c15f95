"""Leaf input buffers: a FIFO whose RAM style is chosen by its size."""

from ..queue import RegisteredFlagsFIFO

__all__ = ["LeafBuffer", "BLOCK_RAM_DEPTH"]

# At this depth and above a buffer goes to block RAM: a 128 x 66-bit buffer is a quarter of a
# BRAM36, against about a hundred LUTs as distributed RAM. Burst-sized leaf buffers (1 KB and
# 4 KB bursts of 8-byte records) are all above it; small test buffers stay in LUTRAM.
BLOCK_RAM_DEPTH = 128


class LeafBuffer(RegisteredFlagsFIFO):
    """A buffered :class:`~topsort_hdl.hardware.queue.RegisteredFlagsFIFO` of ``depth``
    entries of ``shape`` with ``ram_style`` set on its storage: ``"block"`` when ``depth >=
    BLOCK_RAM_DEPTH``, else ``"distributed"``. Its ``i.ready`` is a flip-flop: the sender, a leaf
    feeder or a test's source, sits apart from the tree, and its logic behind READY starts at
    a register."""

    def __init__(self, *, shape, depth):
        super().__init__(shape=shape, capacity=depth, buffered=True,
                         ram_style="block" if depth >= BLOCK_RAM_DEPTH else "distributed")
