"""Interrupts leave nothing behind: SIGINT, SIGTERM or SIGHUP, to a command or to its process
group, end it with one line and 128 + the signal's number, its simulator and the simulator's
children ended with it, no half-written file left and an earlier output as it was."""

import os
import signal
import struct
import subprocess
import sys
import threading
import time

import psutil
import pytest

from topsort_hdl.cli.interrupts import Interrupted, held_signals, signals_interrupt
from topsort_hdl.core.config import config_from
from topsort_hdl.sim import kernel_sort


def _start(*args, cwd):
    """``topsort-hdl ARGS`` in a process group of its own (the test's is not signalled)."""
    return subprocess.Popen([sys.executable, "-m", "topsort_hdl", *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _send(command, signum, to):
    if to == "group":
        os.killpg(command.pid, signum)      # (its group's id is its pid: start_new_session)
    else:
        os.kill(command.pid, signum)


def _name(process):
    try:
        return process.name()
    except psutil.NoSuchProcess:
        return None


def _still_running(processes):
    """Those of ``processes`` (recorded earlier) that still run: not ended, not a zombie."""
    running = []
    for process in processes:
        try:    # (is_running: the same process, not another one given its pid since)
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                running.append(process)
        except psutil.NoSuchProcess:
            pass
    return running


@pytest.fixture(scope="module")
def sort_folder(tmp_path_factory):
    """A folder with 300 records to sort (about 10 s of Icarus on tiny, far longer than a
    test waits) and the tiny kernel generated in ``build`` already (once for the module)."""
    folder = tmp_path_factory.mktemp("interrupted-sorts")
    folder.joinpath("in.bin").write_bytes(
        b"".join(struct.pack("<II", i, (i * 2654435761) % 2**32) for i in range(300)))
    config = config_from("tiny")
    build = kernel_sort._build_folder(config, folder / "build", "icarus")
    build.mkdir(parents=True)
    kernel_sort._kernel_source(config, build)
    return folder


@pytest.mark.parametrize("signum,to", [
    (signal.SIGINT, "process"), (signal.SIGINT, "group"),
    (signal.SIGTERM, "process"), (signal.SIGTERM, "group"),
    (signal.SIGHUP, "process"),
], ids=lambda value: getattr(value, "name", value))
def test_an_interrupted_sort_leaves_nothing_behind(sort_folder, signum, to):
    output = sort_folder / "out.bin"
    output.write_bytes(b"an earlier result")
    command = _start("sort", "--config", "tiny", "--input", "in.bin", "--output", "out.bin",
                     "--build", "build", cwd=sort_folder)
    try:
        started = time.monotonic()
        simulation = []     # the command's descendants once the simulator runs
        while not any(_name(p) == "vvp" for p in simulation):
            assert command.poll() is None, command.communicate()
            assert time.monotonic() - started < 120, "the simulator never started"
            time.sleep(0.1)
            simulation = psutil.Process(command.pid).children(recursive=True)
        _send(command, signum, to)
        out, err = command.communicate(timeout=60)
    finally:
        if command.poll() is None:
            os.killpg(command.pid, signal.SIGKILL)
        survivors = _still_running(simulation)
        for process in survivors:   # (none left to run on after a failure)
            process.kill()
    name = "" if signum == signal.SIGINT else f" by {signal.Signals(signum).name}"
    lines = err.splitlines()
    assert (command.returncode, lines[-1:]) == (128 + signum, [f"topsort-hdl: interrupted{name}"])
    assert all(line.startswith("simulating: ") for line in lines[:-1]), err  # (the progress)
    assert out == ""
    assert survivors == []
    assert output.read_bytes() == b"an earlier result"
    assert sorted(p.name for p in sort_folder.iterdir()) == ["build", "in.bin", "out.bin"]


def test_an_interrupted_generation_says_one_line(tmp_path):
    # Amaranth warns of every elaboratable left unelaborated (hundreds of lines) unless the
    # interrupt silences it.
    command = _start("generate", "--config", "tiny", "--out", "tiny", cwd=tmp_path)
    try:
        first = command.stderr.readline()
        assert first.startswith("generating tiny: ")
        time.sleep(1.5)     # (tiny's generation takes several seconds: the blocks are built)
        assert command.poll() is None, "the generation ended before the interrupt"
        os.killpg(command.pid, signal.SIGINT)      # (Ctrl-C: the terminal's process group)
        out, err = command.communicate(timeout=60)
    finally:
        if command.poll() is None:
            os.killpg(command.pid, signal.SIGKILL)
    assert (command.returncode, out, err) == (130, "", "topsort-hdl: interrupted\n")


def _no_interrupt_from(signum):
    # (A KeyboardInterrupt escaping a test would stop the whole session.)
    try:
        os.kill(os.getpid(), signum)
        time.sleep(0.05)
    except KeyboardInterrupt:
        pytest.fail(f"{signal.Signals(signum).name} interrupted")


def test_a_signal_the_caller_ignores_stays_ignored_and_a_repeat_waits():
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers are the main thread's")    # (SIGTERM would end pytest)
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)     # (as nohup leaves it)
    try:
        with signals_interrupt():
            _no_interrupt_from(signal.SIGHUP)
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)
    before = signal.getsignal(signal.SIGTERM)
    with signals_interrupt():
        with pytest.raises(Interrupted) as caught:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)
        assert caught.value.signum == signal.SIGTERM
        _no_interrupt_from(signal.SIGTERM)     # (while the first unwinds: cleanup goes on)
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_held_signal_interrupts_as_the_block_ends():
    """What `sort` makes under held_signals (its half-written file and the name that removes
    it) is whole before an interrupt that came meanwhile unwinds."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers are the main thread's")
    made = []
    with signals_interrupt():
        with pytest.raises(Interrupted) as caught:
            with held_signals():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.2)
                made.append("file")
            time.sleep(1)
    assert made == ["file"] and caught.value.signum == signal.SIGTERM


def test_a_reader_that_goes_away_ends_the_command_without_a_word():
    """`topsort-hdl configs | head -1`: standard output closed before the command writes."""
    command = subprocess.Popen([sys.executable, "-m", "topsort_hdl", "configs"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    command.stdout.close()
    assert (command.wait(timeout=60), command.stderr.read()) == (128 + signal.SIGPIPE, b"")


def test_ending_a_process_group_ends_every_member_and_waits_for_none_dead(monkeypatch):
    # A member that ignores SIGTERM gets SIGKILL after the grace time.
    monkeypatch.setattr(kernel_sort, "_END_GRACE_SECONDS", 0.2)
    group = subprocess.Popen(["sh", "-c", "trap '' TERM; sleep 60 & sleep 60"],
                             process_group=0)
    members, started = [], time.monotonic()
    while len(members) < 3 and time.monotonic() - started < 30:    # (sh, its two sleeps)
        time.sleep(0.05)
        members = [psutil.Process(group.pid), *psutil.Process(group.pid).children()]
    assert len(members) == 3
    kernel_sort._end_process_group(group)
    assert _still_running(members) == []
    # A zombie (dead, its parent not reaping it yet) is no running member: the end does not
    # wait for it.
    dead = subprocess.Popen(["true"], process_group=0)
    os.waitid(os.P_PID, dead.pid, os.WEXITED | os.WNOWAIT)     # (exited, not reaped)
    os.killpg(dead.pid, 0)      # (the group still exists)
    assert not kernel_sort._group_runs(dead.pid)
    dead.wait()
