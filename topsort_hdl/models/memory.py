"""Where the AXI engines put and take bytes: the memory layouts the host reassembles."""

__all__ = ["batch_chunks", "read_bursts"]


def batch_chunks(length, bases, batch_bytes):
    """The write engine's layout of a ``length``-byte stream over ``len(bases)`` ports.

    Yields ``(stream_offset, address, nbytes)``: batch ``k`` of the stream goes to port
    ``k % ports`` at ``bases[k % ports] + (k // ports) * batch_bytes``. One port writes the
    stream contiguously from its base.
    """
    ports = len(bases)
    if ports == 1:
        if length:
            yield 0, bases[0], length
        return
    for k, offset in enumerate(range(0, length, batch_bytes)):
        yield offset, bases[k % ports] + (k // ports) * batch_bytes, \
            min(batch_bytes, length - offset)


def read_bursts(addr, length, beat_bytes, burst_bytes):
    """The bursts ``(address, beats)`` the read engine issues for one region."""
    if not length:
        return []
    beat = addr // beat_bytes
    end = (addr + length - 1) // beat_bytes + 1
    burst_beats = burst_bytes // beat_bytes
    bursts = []
    while beat < end:
        beats = min(end - beat, burst_beats - beat % burst_beats)
        bursts.append((beat * beat_bytes, beats))
        beat += beats
    return bursts
