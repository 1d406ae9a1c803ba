/// dst (width rows of height) = the transpose of src (height rows of width), through a
/// 16x16 tile in Local Memory padded to 17 columns, with a barrier between the load and the
/// transposed store. The edge tiles are partial.
#[wave::kernel(workgroup = (16, 16, 1))]
fn transpose(src: &[f32], dst: &mut [f32], width: u32, height: u32) {
    let tile = wave::local_array::<f32, 272>();
    let tx = wave::thread_id(0);
    let ty = wave::thread_id(1);
    let x = wave::workgroup_id(0) * 16 + tx;
    let y = wave::workgroup_id(1) * 16 + ty;
    if x < width && y < height {
        tile[(ty * 17 + tx) as usize] = src[(y * width + x) as usize];
    }
    wave::barrier();
    let ox = wave::workgroup_id(1) * 16 + tx;
    let oy = wave::workgroup_id(0) * 16 + ty;
    if ox < height && oy < width {
        dst[(oy * height + ox) as usize] = tile[(tx * 17 + ty) as usize];
    }
}
