import wave


@wave.kernel(workgroup=256)
def reduction(data: f32[:], counts: i32[:], partial: f32[:], total: i32[:], n: u32):
    """Sum of data: a tree in Local Memory with a barrier per level gives one partial sum per
    workgroup; the integer counts are summed per wave with wave.reduce_add and combined with
    one device atomic per wave."""
    buf = wave.local_array(f32, 256)
    tid = wave.thread_id()
    i = wave.global_id()
    buf[tid] = data[i] if i < n else 0.0
    wave.barrier()
    stride: u32 = 128
    while stride > 0:
        if tid < stride:
            buf[tid] = buf[tid] + buf[tid + stride]
        wave.barrier()
        stride = stride >> 1
    if tid == 0:
        partial[wave.workgroup_id()] = buf[0]

    c: i32 = 0
    if i < n:
        c = counts[i]
    s = wave.reduce_add(c)
    if wave.lane_id() == 0:
        wave.atomic_add(total, 0, s)
