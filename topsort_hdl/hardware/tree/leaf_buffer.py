"""Leaf input buffers: a FIFO whose RAM style is chosen by its size."""

from amaranth.lib import fifo

__all__ = ["LeafBuffer", "BLOCK_RAM_DEPTH"]

# At this depth and above a buffer goes to block RAM: a 128 x 66-bit buffer is a quarter of a
# BRAM36, against about a hundred LUTs as distributed RAM. Burst-sized leaf buffers (1 KB and
# 4 KB bursts of 8-byte records) are all above it; small test buffers stay in LUTRAM.
BLOCK_RAM_DEPTH = 128


class LeafBuffer(fifo.SyncFIFOBuffered):
    """A :class:`~amaranth.lib.fifo.SyncFIFOBuffered` with ``ram_style`` set on its storage.

    Members
    -------
    ram_style : str
        ``"block"`` when ``depth >= BLOCK_RAM_DEPTH``, else ``"distributed"``.
    """

    def __init__(self, *, width, depth):
        super().__init__(width=width, depth=depth)
        self.ram_style = "block" if depth >= BLOCK_RAM_DEPTH else "distributed"

    def elaborate(self, platform):
        m = super().elaborate(platform)
        if self.depth > 1:  # a one-entry FIFO is a register, with no storage to annotate
            m.submodules.storage.attrs["ram_style"] = self.ram_style
        return m
