"""The plain-Python core: no Amaranth, so the host library, the analyses and the command line
use it without an HDL toolchain.

- :mod:`.params`, :mod:`.axi_params`, :mod:`.tree_shape`: parameter checks and the limits every
  layer shares;
- :mod:`.boards`: the board files of the top-level ``platforms/``, read and checked;
- :mod:`.config` and :mod:`.plan`: kernel configurations and presets, the pass plan;
- :mod:`.register_map`, :mod:`.register_table`, :mod:`.contract`: what a host sees (registers,
  kernel arguments, buffer layout, report);
- :mod:`.block_figures`: the per-block figures stored with the presets;
- :mod:`.output_paths`: the one rule for every path the package writes;
- :mod:`.golden`: the golden models, the oracle of every hardware test.
"""
