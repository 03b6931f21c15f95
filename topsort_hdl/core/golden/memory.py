"""Where the AXI engines put and take bytes: the memory layouts the host reassembles."""

__all__ = ["batch_chunks", "read_bursts"]


def batch_chunks(length, bases, batch_bytes, slots=1):
    """The write engine's layout of a ``length``-byte stream over ``len(bases) // slots``
    ports of ``slots`` regions each (``bases[port * slots + slot]``).

    Yields ``(stream_offset, address, nbytes)``: batch ``k`` of the stream goes to port
    ``k % ports``; the ``m``-th batch of a port to slot ``m % slots`` at
    ``base + (m // slots) * batch_bytes``. One port and one slot: the stream, contiguously.
    """
    ports = len(bases) // slots
    if ports * slots == 1:
        if length:
            yield 0, bases[0], length
        return
    for k, offset in enumerate(range(0, length, batch_bytes)):
        port, m = k % ports, k // ports
        yield offset, bases[port * slots + m % slots] + (m // slots) * batch_bytes, \
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
