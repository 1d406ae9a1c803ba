import wave


@wave.kernel(workgroup=128)
def histogram(data: u32[:], hist: u32[:], n: u32):
    """A 16-bin histogram of (value >> 2) % 16: Local Memory atomics per workgroup, then one
    device atomic per bin to combine the workgroups."""
    bins = wave.local_array(u32, 16)
    tid = wave.thread_id()
    i = wave.global_id()
    if tid < 16:
        bins[tid] = 0
    wave.barrier()
    if i < n:
        b = (data[i] >> 2) % 16
        wave.atomic_add(bins, b, 1)
    wave.barrier()
    if tid < 16:
        count = bins[tid]
        if count != 0:
            wave.atomic_add(hist, tid, count)
