"""Every console example of the README and docs/ prints what the page shows
(``scripts/doc_examples.py``; ``make examples`` rewrites them), or says why it is not run."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("doc_examples", ROOT / "scripts" / "doc_examples.py")
doc_examples = importlib.util.module_from_spec(spec)
spec.loader.exec_module(doc_examples)

EXAMPLES = [example for page in doc_examples.pages() for example in doc_examples.examples(page)]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda example: example.name)
def test_the_example_prints_what_the_page_shows(example):
    if example.not_run:
        assert len(example.not_run.split()) >= 3, f"{example.name}: say why it is not run"
        return
    assert not doc_examples.problems(example), "\n".join(doc_examples.problems(example))


def test_elided_output_matches_any_lines_and_durations_any_time():
    shown = ["a", "...", "done in 3 s", "z"]
    assert doc_examples.matches(shown, ["a", "done in 41.5 s", "z"])
    assert doc_examples.matches(shown, ["a", "x", "y", "done in 1 s", "z"])
    assert not doc_examples.matches(shown, ["a", "done in 1 s"])
    assert not doc_examples.matches(["a", "b"], ["a", "c"])
    assert not doc_examples.matches(["1 GB"], ["2 GB"])


def test_a_page_that_drifted_fails_and_update_rewrites_it(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text("text\n\n```console\n$ echo one; echo two 1>&2\none\nthree\n```\n\n"
                    "<!-- example not run: needs a card and Vivado -->\n```console\n"
                    "$ vivado\nanything\n```\n")
    monkeypatch.setattr(doc_examples, "ROOT", tmp_path)
    run, not_run = doc_examples.examples(page)
    assert not_run.not_run == "needs a card and Vivado"
    assert doc_examples.problems(run)
    assert doc_examples.update(page) == 1
    assert "$ echo one; echo two 1>&2\none\ntwo\n```" in page.read_text()
    assert not doc_examples.problems(doc_examples.examples(page)[0])
