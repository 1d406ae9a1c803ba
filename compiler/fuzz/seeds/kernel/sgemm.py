import wave


@wave.kernel(workgroup=(16, 16))
def sgemm(a: f32[:], b: f32[:], c: f32[:], m: u32, n: u32, k: u32):
    """C = A x B with A m-by-k, B k-by-n and C m-by-n, all row-major. Each 16x16 workgroup
    computes a 16x16 tile of C, staging 16x16 tiles of A and B through Local Memory with a
    barrier after each load and after each use. Elements outside the matrices load as zero."""
    tile_a = wave.local_array(f32, 256)
    tile_b = wave.local_array(f32, 256)
    tx = wave.thread_id(0)
    ty = wave.thread_id(1)
    col = wave.workgroup_id(0) * 16 + tx
    row = wave.workgroup_id(1) * 16 + ty
    acc: f32 = 0.0
    tiles = (k + 15) // 16
    for t in range(tiles):
        ka = t * 16 + tx
        if row < m and ka < k:
            tile_a[ty * 16 + tx] = a[row * k + ka]
        else:
            tile_a[ty * 16 + tx] = 0.0
        kb = t * 16 + ty
        if kb < k and col < n:
            tile_b[ty * 16 + tx] = b[kb * n + col]
        else:
            tile_b[ty * 16 + tx] = 0.0
        wave.barrier()
        for j in range(u32(16)):
            acc += tile_a[ty * 16 + j] * tile_b[j * 16 + tx]
        wave.barrier()
    if row < m and col < n:
        c[row * n + col] = acc
