import wave


@wave.kernel(workgroup=256)
def reduce(data: f32[:], sums: f32[:], hist: u32[:], n: u32):
    i = wave.global_id()
    v = data[i] if i < n else 0.0
    s = wave.reduce_add(u32(v * 100.0))
    if wave.lane_id() == 0:
        wave.atomic_add(sums, 0, f32(s))
    bucket = min(u32(abs(v) * 4.0), 15)
    old = wave.atomic_add(hist, bucket, 1)
    wave.barrier()
    mask = wave.ballot(v > 0.5 and old < 100)
    prefix = wave.prefix_sum(mask & 1)
    sums[1 + wave.lane_id()] = sqrt(f32(prefix)) if wave.any(v < 0.0) else -1.5
