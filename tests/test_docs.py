"""The README and docs/: tables generated from the golden files, links, make targets."""

import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

spec = importlib.util.spec_from_file_location("golden_tables",
                                              ROOT / "scripts" / "golden_tables.py")
golden_tables = importlib.util.module_from_spec(spec)
spec.loader.exec_module(golden_tables)


def test_the_generated_tables_match_the_golden_files():
    stale = [page.name for page in golden_tables.pages()
             if golden_tables.render(page.read_text()) != page.read_text()]
    assert not stale, f"out of date with benchmarks/golden/*.json: {stale}; run make docs"


def test_every_golden_file_has_a_generated_table():
    used = {match.group("file") for page in golden_tables.pages()
            for match in golden_tables.BEGIN.finditer(page.read_text())}
    assert used == {f"benchmarks/golden/{path.name}"
                    for path in (ROOT / "benchmarks" / "golden").glob("*.json")}


def test_a_golden_refresh_without_make_docs_fails(tmp_path):
    """A refreshed figure makes the committed page differ from what the generator writes."""
    shutil.copytree(ROOT / "benchmarks", tmp_path / "benchmarks")
    page = (ROOT / "docs" / "qor.md").read_text()
    assert golden_tables.render(page, root=tmp_path) == page
    qor = tmp_path / "benchmarks" / "golden" / "qor.json"
    golden = json.loads(qor.read_text())
    golden["figures"]["fmax_mhz.merge_unit_1"]["value"] = 987.65
    qor.write_text(json.dumps(golden))
    new = golden_tables.render(page, root=tmp_path)
    assert new != page and "987.65" in new and "987.65" not in page
    assert golden_tables.render(new, root=tmp_path) == new      # a second run changes nothing


def test_a_marker_without_its_end_or_table_is_an_error():
    begin = "<!-- generated from benchmarks/golden/qor.json (pnr): do not edit -->\n"
    with pytest.raises(ValueError, match="has no '<!-- end generated -->'"):
        golden_tables.render("text\n" + begin + "| old |\n")
    with pytest.raises(ValueError, match="no table 'speed'"):
        golden_tables.render(begin.replace("pnr", "speed") + golden_tables.END)


def slug(heading):
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page):
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return {slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_link_between_the_pages_resolves(page):
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
        if re.match(r"[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page.name}: {target}: no such file"
        if anchor:
            assert anchor in anchors(linked), f"{page.name}: {target}: no such heading"


def test_the_readme_and_make_help_list_every_make_target():
    makefile = (ROOT / "Makefile").read_text()
    phony = re.search(r"^\.PHONY:(.*?)(?<!\\)\n", makefile, flags=re.M | re.S).group(1)
    targets = set(phony.replace("\\", " ").split()) - {"all", "help"}
    help_text = makefile[makefile.index("\nhelp:"):makefile.index("\nsetup:")]
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("## Make targets"):readme.index("## An example sort")]
    assert {target for target in targets if f"`make {target}`" not in table} == set()
    assert {target for target in targets if f"make {target}" not in help_text} == set()


def test_no_page_cites_a_file_outside_the_repository():
    for page in PAGES:
        assert not re.search(r"\.\./shared|DESIGN-BRIEF|TOOLCHAIN\.md|INTERFACES\.md",
                             page.read_text()), page.name


def documented_registers(page):
    """``(offset, name, bytes, access)`` of the register table in ``page``, the collapsed rows
    (``0x18, 0x20 ... 0x110`` with ``a, b ... y, z``) expanded by the offsets' step."""
    section = page[page.index("## Register map"):]
    rows = re.findall(r"^\| (0x[^|]+) \| ([^|]+) \| (\d+) \| (r[ow]) \|", section, re.MULTILINE)
    out = []
    for offsets, names, size, access in rows:
        offsets = [int(o, 16) for o in re.findall(r"0x[0-9A-Fa-f]+", offsets)]
        names = re.findall(r"\w+", names)
        if len(offsets) == 1:
            out.append((offsets[0], names[0], int(size), access))
            continue
        # first, second ... second to last, last: the slots between are named by the map
        step = offsets[1] - offsets[0]
        known = dict(zip(offsets, names, strict=True))
        out += [(offset, known.get(offset), int(size), access)
                for offset in range(offsets[0], offsets[-1] + step, step)]
    return out


def test_the_register_table_is_u280s_map():
    """kernel-contract.md's register table (its Meaning column is prose) holds the offsets,
    names, sizes and access of u280's RegisterMap, the map kernel.xml and the RTL use."""
    from topsort_hdl.core.config import PRESETS
    from topsort_hdl.core.contract import kernel_arguments, kernel_counters
    from topsort_hdl.core.register_map import RegisterMap

    config = PRESETS["u280"]
    regs = RegisterMap(kernel_arguments(config), kernel_counters(config))
    documented = documented_registers((ROOT / "docs" / "kernel-contract.md").read_text())
    assert len(documented) == len(regs)
    for (offset, name, size, access), entry in zip(documented, regs, strict=True):
        assert (offset, size, access) == (entry.offset, entry.bytes, entry.access), entry.name
        assert name in (None, entry.name), (offset, name, entry.name)


def test_the_layout_table_names_every_field_of_layout_json(tmp_path):
    """kernel-contract.md's layout table has a row for every field `generate` writes to
    layout.json, and none that it does not."""
    from topsort_hdl.core.config import PRESETS
    from topsort_hdl.core.contract import layout_descriptor
    from topsort_hdl.targets.vitis.connectivity import port_channels

    config = PRESETS["tiny"]
    fields = set(layout_descriptor(config, registers={}, channel_map=port_channels(config),
                                   kernel="topsort"))
    page = (ROOT / "docs" / "kernel-contract.md").read_text()
    table = page[page.index("## The layout descriptor"):page.index("## Split")]
    documented = {name for row in re.findall(r"^\| (.+?) \|", table, re.MULTILINE)
                  for name in re.findall(r"`(\w+)`", row)}
    assert documented == fields
