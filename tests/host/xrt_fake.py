"""A stand-in for XRT's pyxrt, held to pyxrt's type stub, with the golden model as the card.

:func:`stub_names` reads what the stub declares; :func:`fake_pyxrt` builds a module that
offers exactly the stub's names (enums with the stub's members) and implements the few a host
needs, each checked against the stub: a host that calls anything the stub does not declare
fails here with AttributeError, as it would on a real pyxrt. The "card" keeps device memory
apart from each buffer's host copy (so a missing sync shows), and a run sorts with
:class:`topsort_hdl.core.golden.kernel.KernelModel` and writes the completion report.
"""

import ast
import enum
import json
import os
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def reference_xrt():
    """XRT's headers and stub: ``$XILINX_XRT`` when set, else the shared reference copy next to
    the repository; ``(include dir or None, stub path or None, where)``."""
    candidates = []
    if os.environ.get("XILINX_XRT"):
        candidates.append(Path(os.environ["XILINX_XRT"]))
    candidates.append(ROOT.parent / "shared" / "reference" / "xrt")
    include = next((c / "include" for c in candidates if (c / "include" / "xrt").is_dir()),
                   None)
    stub = next((p for c in candidates for p in (c / "pyxrt.pyi", *c.glob("**/pyxrt.pyi"))
                 if p.is_file()), None)
    return include, stub, " or ".join(str(c) for c in candidates)


def stub_names(path):
    """``{"": top-level names, "cls": its members, "cls.inner": ...}`` from a ``.pyi`` stub."""
    names = {}

    def walk(body, scope):
        here = names.setdefault(scope, set())
        for node in body:
            if isinstance(node, ast.ClassDef):
                here.add(node.name)
                walk(node.body, f"{scope}.{node.name}".lstrip("."))
            elif isinstance(node, ast.FunctionDef):
                here.add(node.name)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                here.add(node.target.id)
            elif isinstance(node, ast.Assign):
                here.update(t.id for t in node.targets if isinstance(t, ast.Name))

    walk(ast.parse(Path(path).read_text()).body, "")
    return names


def _enum_members(path):
    """Every ``IntEnum`` of the stub (nested ones as ``outer.inner``) with its members."""
    enums = {}

    def walk(body, scope):
        for node in body:
            if isinstance(node, ast.ClassDef):
                name = f"{scope}.{node.name}".lstrip(".")
                if any(getattr(b, "id", None) == "IntEnum" for b in node.bases):
                    enums[name] = [n.target.id for n in node.body
                                   if isinstance(n, ast.AnnAssign)]
                walk(node.body, name)

    walk(ast.parse(Path(path).read_text()).body, "")
    return enums


class Card:
    """Device memory, by address."""

    def __init__(self):
        self.memory = {}
        self.next_address = 0x4000_0000

    def allocate(self, size):
        address = self.next_address
        self.next_address += -(-size // 4096) * 4096 + 4096
        return address

    def write(self, address, data):
        for i, byte in enumerate(data):
            self.memory[address + i] = byte

    def read(self, address, length):
        return bytes(self.memory.get(address + i, 0) for i in range(length))


def fake_pyxrt(stub_path, layout):
    """A ``pyxrt`` module for a kernel of ``layout`` (a :class:`topsort_hdl.core.contract.Layout`),
    and its :class:`Card`. Raises ``AssertionError`` if the fake itself strays from the stub."""
    import numpy as np

    from topsort_hdl.core import contract

    declared = stub_names(stub_path)
    enums = {name: enum.IntEnum(name.split(".")[-1], members)
             for name, members in _enum_members(stub_path).items()}
    card = Card()
    module = types.ModuleType("pyxrt")

    class uuid:
        def __init__(self, uuid_str):
            self.text = uuid_str

        def to_string(self):
            return self.text

    class xclbin:
        class xclbinkernel:
            def __init__(self, name=""):
                self.name = name

            def get_name(self):
                return self.name

        def __init__(self, filename):
            self.saved = json.loads(Path(filename).read_text())

        def get_kernels(self):
            return [xclbin.xclbinkernel(name) for name in self.saved["kernels"]]

        def get_uuid(self):
            return uuid(self.saved["uuid"])

    class device:
        def __init__(self, index):
            self.index = int(index)
            self.registered = []

        def register_xclbin(self, image):
            self.registered.append(image)
            return image.get_uuid()

    class hw_context:
        def __init__(self, dev, id_):
            assert isinstance(dev, device) and isinstance(id_, uuid)
            self.dev = dev
            self.image = next(x for x in dev.registered if x.get_uuid().text == id_.text)

        def get_device(self):
            return self.dev

    class kernel:
        def __init__(self, ctx, name):
            assert isinstance(ctx, hw_context)
            if name not in [k.get_name() for k in ctx.image.get_kernels()]:
                raise RuntimeError(f"No such compute unit '{name}'")     # as XRT does
            self.ctx = ctx

        def group_id(self, index):
            return 100 + int(index)

    class bo:
        flags = enums["bo.flags"]
        normal = flags.normal

        def __init__(self, ctx, size, flags, group):
            assert isinstance(ctx, hw_context) and isinstance(flags, enum.IntEnum)
            self._size = int(size)
            self._address = card.allocate(self._size)
            self.host = bytearray(self._size)
            self.group = group

        def write(self, data, seek):
            data = bytes(data)
            self.host[seek:seek + len(data)] = data

        def read(self, size, skip):
            return np.frombuffer(bytes(self.host[skip:skip + size]), dtype=np.int8)

        def sync(self, direction, size, offset):
            directions = enums["xclBOSyncDirection"]
            if direction == directions.XCL_BO_SYNC_BO_TO_DEVICE:
                card.write(self._address + offset, self.host[offset:offset + size])
            else:
                assert direction == directions.XCL_BO_SYNC_BO_FROM_DEVICE
                self.host[offset:offset + size] = card.read(self._address + offset, size)

        def size(self):
            return self._size

        def address(self):
            return self._address

    class run:
        def __init__(self, krnl):
            assert isinstance(krnl, kernel)
            self.args = {}
            self.state = enums["ert_cmd_state"].ERT_CMD_STATE_NEW

        def set_arg(self, index, value):
            assert isinstance(value, (bo, int)), value
            if isinstance(value, int):      # a scalar: pyxrt's 32-bit scalars only
                assert 0 <= value < 1 << 32, value
            self.args[int(index)] = value

        def start(self):
            _sort_on_card(card, layout, self.args, contract)
            self.state = enums["ert_cmd_state"].ERT_CMD_STATE_COMPLETED

        def wait(self):
            return self.state

    implemented = {"uuid": uuid, "xclbin": xclbin, "device": device,
                   "hw_context": hw_context, "kernel": kernel, "bo": bo, "run": run}
    for name, cls in implemented.items():
        extra = {a for a in vars(cls) if not a.startswith("_")} - declared[name]
        assert not extra, f"the fake's pyxrt.{name} has {extra}, which the stub does not declare"
        for inner in (a for a, v in vars(cls).items() if isinstance(v, type)
                      and not issubclass(v, enum.Enum)):
            extra = {a for a in vars(getattr(cls, inner)) if not a.startswith("_")} - \
                declared[f"{name}.{inner}"]
            assert not extra, f"pyxrt.{name}.{inner}: {extra} not in the stub"
        setattr(module, name, cls)
    for name, value in enums.items():
        if "." not in name:
            setattr(module, name, value)
    assert set(vars(module)) - {"__name__", "__doc__", "__package__", "__loader__",
                                "__spec__"} <= declared[""]
    return module, card


def _sort_on_card(card, layout, args, contract):
    """A run of the fake kernel: its arguments (buffers as their addresses) to
    :func:`golden_job`."""
    values = {}
    for i, argument in enumerate(layout.arguments):
        value = args[i]
        values[argument["name"]] = value.address() if hasattr(value, "address") else value
    golden_job(card, layout, values)


def golden_job(card, layout, values):
    """What the kernel does, by the golden model, on ``card``'s memory (``read``, ``write``)
    with the arguments ``values`` (name -> number): read the halves, sort, write the output
    batches and the report."""
    from topsort_hdl.core import contract
    from topsort_hdl.core.config import config_from
    from topsort_hdl.core.golden.kernel import KernelModel
    from topsort_hdl.core.plan import split_records, tree_plans
    from topsort_hdl.host import pack_records, unpack_records

    count = values[contract.RECORDS_ARGUMENT]
    halves = [tuple(values[contract.half_argument(i, h)] for h in (0, 1))
              for i in range(layout.trees)]
    size = layout.record_bytes
    widths = layout.record["key_bits"], layout.record["value_bits"]
    order = values[contract.KEY_ORDER_ARGUMENT]
    types = {code: name for name, code in contract.KEY_TYPE_CODES.items()}
    assert order & ~(3 | contract.KEY_ORDER_DESCENDING) == 0 and order & 3 in types, order
    inputs = [unpack_records(card.read(halves[tree][0], share * size), *widths)
              for tree, share in enumerate(split_records(count, layout.trees))]
    config = config_from(layout.config, [f"key_bits={widths[0]}", f"value_bits={widths[1]}"])
    model = KernelModel(config,     # (the model reads no board fact)
                        key_type=types[order & 3],
                        descending=bool(order & contract.KEY_ORDER_DESCENDING))
    output = model.run_trees(inputs, halves)
    stream = pack_records(output, *widths)
    for offset, address, length in model.chunks:
        card.write(address, stream[offset:offset + length])
    plans = tree_plans(layout, count)
    report = contract.Report(contract.REPORT_VERSION, 0, count, 1000 + count, 500 + count,
                             tuple(len(p.passes) for p in plans),
                             tuple(p.final_half ^ 1 for p in plans))
    card.write(values[contract.REPORT_ARGUMENT],
               contract.pack_report(report, layout.trees, layout.beat_bytes))


class GoldenDevice:
    """A :class:`topsort_hdl.host.Device` whose kernel is the golden model: registers by the
    layout's map, a job on ap_start, ap_done at once."""

    def __init__(self, layout):
        from topsort_hdl.core.contract import AP_DONE, AP_START, CONTROL
        from topsort_hdl.core.register_map import RegisterMap

        self.layout, self.card, self.words = layout, Card(), {}
        self.map = RegisterMap([(a["name"], a["bits"]) for a in layout.arguments])
        self.control, self.start, self.done = CONTROL, AP_START, AP_DONE

    async def write_register(self, offset, value):
        self.words[offset] = value
        if offset == self.control and value >> self.start & 1:
            values = {}
            for name, bits in self.map.args:
                base = self.map.offset(name)
                values[name] = self.words.get(base, 0) | (
                    self.words.get(base + 4, 0) << 32 if bits > 32 else 0)
            golden_job(self.card, self.layout, values)
            self.words[self.control] = 1 << self.done

    async def read_register(self, offset):
        return self.words.get(offset, 0)

    def offset(self, name):
        return self.map.offset(name)

    def write_memory(self, address, data):
        self.card.write(address, data)

    def read_memory(self, address, length):
        return self.card.read(address, length)
