@kernel
def sum_reduce(a: f32[:], out: f32[:], n: u32):
    gid = thread_id()
    if gid == 0:
        total: f32 = 0.0
        for i in range(n):
            total = total + a[i]
        out[0] = total
