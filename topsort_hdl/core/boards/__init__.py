"""Board and device facts the kernel configurations, the Vitis files and the on-chip demo are
built on. They live in ``platforms/`` at the top of the repository, one sourced TOML file per
board (:mod:`.load` reads and checks them); adding a board is adding a file there.

- :data:`HBM_BOARDS`: the memories a kernel configuration runs on (``kind = "hbm"``), by name;
- :data:`DEMO_BOARDS`: the boards the on-chip demo builds for (``kind = "demo-board"``).
"""

from .board import RESOURCE_KINDS, DemoBoard, HbmBoard, Resources, VitisShell
from .load import BUFFER_RAMS, KINDS, board_files, load_boards

__all__ = ["HbmBoard", "Resources", "VitisShell", "DemoBoard", "HBM_BOARDS", "DEMO_BOARDS",
           "RESOURCE_KINDS", "KINDS", "BUFFER_RAMS", "load_boards", "board_files"]

_BOARDS = load_boards()
HBM_BOARDS = {name: board for name, board in _BOARDS.items() if isinstance(board, HbmBoard)}
DEMO_BOARDS = {name: board for name, board in _BOARDS.items() if isinstance(board, DemoBoard)}
