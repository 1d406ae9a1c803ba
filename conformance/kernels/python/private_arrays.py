import wave


@wave.kernel(workgroup=64)
def private_arrays(data: u32[:], vals: f32[:], out: u32[:], sums: f32[:], n: u32):
    """Arrays of each thread's own: an 8-bin histogram indexed by the data (kept in the
    thread's frame of Local Memory), and a window of 4 values indexed by constants and
    a counted loop, written on both sides of a branch: in registers at -O3, where the loop
    is unrolled and mem2reg promotes the array; in the frame below that."""
    i = wave.global_id()
    if i >= n:
        return
    bins = wave.private_array(u32, 8)
    for j in range(u32(16)):
        v = data[i * 16 + j]
        bins[v & 7] += 1
        if v > 1000:
            bins[0] += v >> 10
    w = wave.private_array(f32, 4)
    for j in range(u32(4)):
        w[j] = vals[i * 4 + j]
    if (i & 1) == 0:
        w[0] = w[3]
    else:
        w[3] = w[0] + w[1] * 0.5
    w[2] += w[1]
    for b in range(u32(8)):
        out[i * 8 + b] = bins[b]
    sums[i] = w[0] + w[1] + w[2] + w[3] + f32(bins[data[i * 16] % 8])
