import wave


@wave.kernel(workgroup=32)
def divergent_loop(out: u32[:], steps: u32[:], n: u32, limit: u32):
    """Per-thread trip counts: a for loop with continue and break inside ifs, a nested loop
    that breaks early, and a while loop (Collatz steps) with continue and a break."""
    i = wave.global_id()
    if i >= n:
        return
    total: u32 = 0
    for k in range(i % 23 + 1):
        if k % 3 == 2:
            continue
        if total > limit:
            break
        if (k & 4) != 0:
            for j in range(k):
                if j == i % 5:
                    break
                total += j
            continue
        total += k * k
    out[i] = total

    x = i + 1
    count: u32 = 0
    odd: u32 = 0
    while x != 1:
        count += 1
        if count > 60:
            break
        if x % 2 == 0:
            x = x >> 1
            continue
        odd += 1
        x = 3 * x + 1
    steps[2 * i] = count
    steps[2 * i + 1] = odd * 1000 + x
