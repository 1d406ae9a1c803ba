import wave


@wave.kernel(workgroup=(16, 16))
def transpose(src: f32[:], dst: f32[:], width: u32, height: u32):
    """dst (width rows of height) = the transpose of src (height rows of width), through a
    16x16 tile in Local Memory padded to 17 columns, with a barrier between the load and the
    transposed store. The edge tiles are partial."""
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
