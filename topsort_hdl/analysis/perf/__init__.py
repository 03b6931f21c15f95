"""Performance model: cycles, passes and GB/s per phase before any hardware exists."""
