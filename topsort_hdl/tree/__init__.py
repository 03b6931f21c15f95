"""Merge trees (p, l), couplers, leaf buffers and the phase-2 merge-tree reuse switch."""
