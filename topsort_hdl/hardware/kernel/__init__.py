"""The two-phase TopSort kernel's gateware: leaf feeders (:mod:`.feeder`), root packers
(:mod:`.packer`), tree controllers (:mod:`.controller`), the argument checks
(:mod:`.arguments`), the completion report (:mod:`.report`) and the kernel that ties trees,
switch and AXI engines together (:mod:`.kernel`). Its configuration and pass plan are plain
Python, in :mod:`topsort_hdl.core`; its Verilog comes from
:mod:`topsort_hdl.targets.kernel_verilog`.
"""
