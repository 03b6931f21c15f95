"""A :class:`~topsort_hdl.core.register_map.RegisterMap` rendered for people: a Markdown table, laid
out like docs/kernel-contract.md's."""

__all__ = ["register_table"]


def register_table(registers):
    """``registers`` (a :class:`~topsort_hdl.core.register_map.RegisterMap`) as a Markdown table,
    one row per register in address order."""
    lines = ["| Offset | Name | Bytes | Access | Description |",
             "|---|---|---|---|---|"]
    for entry in registers.entries:
        lines.append(f"| 0x{entry.offset:02X} | {entry.name} | {entry.bytes} | "
                     f"{entry.access} | {entry.description} |")
    return "\n".join(lines) + "\n"
