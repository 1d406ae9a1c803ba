import wave


@wave.kernel(workgroup=(16, 16))
def transpose(src: f32[:], dst: f32[:], width: u32, height: u32):
    """A tile in Local Memory, a barrier, and the tile written back transposed."""
    tile = wave.local_array(f32, 272)
    tx = wave.thread_id(0)
    ty = wave.thread_id(1)
    x = wave.workgroup_id(0) * 16 + tx
    y = wave.workgroup_id(1) * 16 + ty
    if x < width and y < height:
        tile[ty * 17 + tx] = src[y * width + x]
    wave.barrier()
    ox = wave.workgroup_id(1) * 16 + tx
    oy = wave.workgroup_id(0) * 16 + ty
    if ox < height and oy < width:
        dst[oy * height + ox] = tile[tx * 17 + ty]
