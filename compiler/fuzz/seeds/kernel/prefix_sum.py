import wave


@wave.kernel(workgroup=256)
def prefix_sum(data: u32[:], out: u32[:], block_sums: u32[:], n: u32):
    """Exclusive prefix sum of each 256-element block: wave.prefix_sum within each wave, the
    waves' totals through Local Memory, and each wave adds the totals of the waves before it.
    Correct at any wave width. Elements past n count as zero."""
    wave_totals = wave.local_array(u32, 64)
    tid = wave.thread_id()
    i = wave.global_id()
    width = wave.wave_width()
    w = wave.wave_id()
    lane = wave.lane_id()
    v: u32 = 0
    if i < n:
        v = data[i]
    p = wave.prefix_sum(v)
    if lane == width - 1:
        wave_totals[w] = p + v
    wave.barrier()
    offset: u32 = 0
    for k in range(w):
        offset += wave_totals[k]
    if i < n:
        out[i] = offset + p
    if tid == wave.workgroup_size() - 1:
        block_sums[wave.workgroup_id()] = offset + p + v
