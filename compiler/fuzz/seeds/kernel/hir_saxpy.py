import wave


@wave.kernel
def saxpy(alpha: f32, x: f32[:], y: f32[:], n: u32):
    i = wave.workgroup_id() * wave.workgroup_size() + wave.thread_id()
    if i >= n:
        return
    y[i] = alpha * x[i] + y[i]
