"""Blocks: components whose identity is their class and constructor arguments, so that a design
with many copies of a few blocks is emitted as one Verilog module per distinct block.

Amaranth builds one netlist module per instance, and the cost of building grows with the number
of instances. A :class:`Block` remembers how it was constructed; while
:func:`substituted` is in force (the hierarchical Verilog writer of
:mod:`topsort_hdl.targets.hierarchy` puts it in force while it converts a design), every block
the substitute shares elaborates to the :class:`~amaranth.hdl.Instance` it gives for the block's
identity. Outside it a block elaborates as the component it is, so Amaranth's simulator and a
plain ``verilog.convert`` see no difference.

Blocks are the parts a design repeats: merge units, couplers, trees, engines, packers,
controllers, register slices. A merge unit's own parts (its selector, lane queues, credit
counter and networks) stay plain components inside the unit's module: synthesis then sees the
unit whole, as its selector loop was tuned (a module boundary in it cost the rate-2 unit a LUT
level).

An identity is the block's class and its constructor's arguments bound to their names, with
defaults filled in (``MergeTree(r, 8, 16)`` and ``MergeTree(r, 8, 16, fifo_depth=8)`` are one
block). Arguments must have a stable ``repr`` (layouts, numbers, strings, dataclasses, named
functions); an argument that shows only an address makes that block's every copy its own module
again, never a shared one.
"""

import contextlib
import contextvars
import hashlib
import inspect
import re

from amaranth.lib import wiring

__all__ = ["Block", "module_name", "substituted"]

# What blocks elaborate to while a design is being converted (None: the blocks themselves).
_SUBSTITUTE = contextvars.ContextVar("topsort_block_substitute", default=None)
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _stable_repr(value):
    """``repr`` of a constructor argument, with functions and classes by their qualified name."""
    if inspect.isfunction(value) or inspect.isclass(value):
        name = f"{value.__module__}.{value.__qualname__}"
        # A lambda or a local definition: its name does not say which code it is.
        return f"{name} at 0x{id(value):x}" if "<" in name else name
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_stable_repr(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    return repr(value)


def _snake(name):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


class Block(wiring.Component):
    """A component that the hierarchical writer emits once per identity (see the module).

    Subclasses are ordinary components. ``module_tag_format`` gives the readable part of their
    module name, formatted with the constructor's arguments by name (``"mms_e{rate}"``); the
    default is the class name. A block's hardware must follow from its constructor's arguments
    alone (nothing set on it afterwards changes what it elaborates to), and every port a parent
    uses must be in the signature: the module boundary has no other way in or out.
    """

    module_tag_format = None

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        try:
            bound = inspect.signature(cls.__init__).bind(self, *args, **kwargs)
            bound.apply_defaults()
            arguments = list(bound.arguments.items())[1:]     # without self
            text = ", ".join(f"{name}={_stable_repr(value)}" for name, value in arguments)
        except TypeError:
            text = None     # the constructor raises the error with its own message
        if text is not None and _ADDRESS.search(text):
            text = None
        self._block_arguments = None if text is None else dict(arguments)
        self._block_identity = (None if text is None
                                else f"{cls.__module__}.{cls.__qualname__}({text})")
        return self

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("elaborate")
        if own is None or getattr(own, "_block_wrapped", False):
            return

        def elaborate(self, platform):
            substitute = _SUBSTITUTE.get()
            if substitute is not None and substitute.shares(self):
                return substitute.instance(self)
            return own(self, platform)

        elaborate._block_wrapped = True
        elaborate.__doc__ = own.__doc__
        cls.elaborate = elaborate

    @property
    def block_identity(self):
        """The class and bound constructor arguments, or None if they cannot identify it."""
        return self._block_identity

    @property
    def block_arguments(self):
        """The constructor's arguments by name, defaults filled in (``type(block)(**them)``
        builds the same block again), or None when they cannot identify it."""
        return None if self._block_arguments is None else dict(self._block_arguments)

    def module_tag(self):
        """The readable part of this block's module name."""
        if self.module_tag_format is None:
            return _snake(type(self).__name__)
        return self.module_tag_format.format(**self._block_arguments)


def module_name(block, prefix):
    """The Verilog module a block becomes in a design whose top is ``prefix``:
    ``<prefix>_<tag>_<hash of its identity>`` (so that designs written with different top
    names can be read together)."""
    digest = hashlib.sha256(block.block_identity.encode()).hexdigest()[:6]
    return f"{prefix}_{block.module_tag()}_{digest}"


@contextlib.contextmanager
def substituted(substitute):
    """While in force, a :class:`Block` for which ``substitute.shares(block)`` is true
    elaborates to ``substitute.instance(block)`` (an :class:`~amaranth.hdl.Instance` of the
    module that stands for its identity) instead of its own hardware."""
    token = _SUBSTITUTE.set(substitute)
    try:
        yield substitute
    finally:
        _SUBSTITUTE.reset(token)
