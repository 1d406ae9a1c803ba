/// y[i] = alpha * x[i] + y[i] for every i below n.
#[wave::kernel(workgroup = (64, 1, 1))]
fn saxpy(alpha: f32, x: &[f32], y: &mut [f32], n: u32) {
    let i = wave::global_id(0);
    if i >= n {
        return;
    }
    y[i as usize] = alpha * x[i as usize] + y[i as usize];
}
