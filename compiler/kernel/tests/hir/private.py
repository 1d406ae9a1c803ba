import wave


@wave.kernel(workgroup=64)
def private(data: u32[:], out: f32[:], n: u32):
    """Two arrays of each thread's own: `w`, indexed only by constants, becomes values at -O2
    (mem2reg); `bins`, indexed by the data, stays in the thread's frame of Local Memory."""
    i = wave.global_id()
    w = wave.private_array(f32, 3)
    bins = wave.private_array(u32, 4)
    w[0] = f32(data[i])
    if i < n:
        w[1] = w[0] * 2.0
        bins[data[i] & 3] += 1
    else:
        w[2] = 1.0
    out[i] = w[0] + w[1] + w[2] + f32(bins[1])
