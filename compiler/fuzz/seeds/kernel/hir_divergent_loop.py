import wave


@wave.kernel(workgroup=(32, 1, 1))
def divergent(out: u32[:], limit: u32):
    lane = wave.lane_id()
    total: u32 = 0
    for k in range(lane + 1):
        if k % 3 == 0:
            continue
        elif k > limit:
            break
        else:
            total += k
    steps = 0
    x = f32(total)
    while x > 1.0:
        x = x / 2.0
        steps += 1
    out[lane] = total if steps < 4 else u32(steps)
