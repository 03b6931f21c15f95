"""The Amaranth hardware, lowest first: :mod:`.records` (record and bundle layouts),
:mod:`.merge` (compare-swap cells, bitonic merge networks, the MMS and rate-1 merge units),
:mod:`.tree` (merge trees and the phase-2 reuse switch), :mod:`.axi` (HBM read and write
engines, register slices, the AXI4-Lite control block) and :mod:`.kernel` (leaf feeders, root
packers, tree controllers and the two-phase kernel). :mod:`.block` gives every block its
module name in the hierarchical Verilog; :mod:`.queue` is the FIFO with registered flags that
the tree's leaf buffers and the write engine share.
"""
