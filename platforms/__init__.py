"""Board and device facts (HBM channels, SLRs, resources, clocks): data only, no logic.

Empty until the kernel issues; the hardware classes never read from here directly.
"""
