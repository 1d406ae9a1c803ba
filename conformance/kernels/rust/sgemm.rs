/// C = A x B with A m-by-k, B k-by-n and C m-by-n, all row-major. Each 16x16 workgroup
/// computes a 16x16 tile of C, staging 16x16 tiles of A and B through Local Memory with a
/// barrier after each load and after each use. Elements outside the matrices load as zero.
#[wave::kernel(workgroup = (16, 16, 1))]
fn sgemm(a: &[f32], b: &[f32], c: &mut [f32], m: u32, n: u32, k: u32) {
    let tile_a = wave::local_array::<f32, 256>();
    let tile_b = wave::local_array::<f32, 256>();
    let tx = wave::thread_id(0);
    let ty = wave::thread_id(1);
    let col = wave::workgroup_id(0) * 16 + tx;
    let row = wave::workgroup_id(1) * 16 + ty;
    let mut acc: f32 = 0.0;
    let tiles = (k + 15) / 16;
    for t in 0..tiles {
        let ka = t * 16 + tx;
        if row < m && ka < k {
            tile_a[(ty * 16 + tx) as usize] = a[(row * k + ka) as usize];
        } else {
            tile_a[(ty * 16 + tx) as usize] = 0.0;
        }
        let kb = t * 16 + ty;
        if kb < k && col < n {
            tile_b[(ty * 16 + tx) as usize] = b[(kb * n + col) as usize];
        } else {
            tile_b[(ty * 16 + tx) as usize] = 0.0;
        }
        wave::barrier();
        for j in 0..16u32 {
            acc += tile_a[(ty * 16 + j) as usize] * tile_b[(j * 16 + tx) as usize];
        }
        wave::barrier();
    }
    if row < m && col < n {
        c[(row * n + col) as usize] = acc;
    }
}
