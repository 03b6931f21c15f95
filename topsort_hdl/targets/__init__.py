"""What turns the hardware into artefacts: the kernel's Verilog (:mod:`.kernel_verilog`),
standalone blocks (:mod:`.units`), the Vitis project (:mod:`.vitis`) and the on-chip demo with
its ECP5 board builds (:mod:`.onchip`).
"""
