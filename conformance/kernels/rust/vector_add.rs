/// c[i] = a[i] + b[i] for every i below n; the threads past n store nothing.
#[wave::kernel(workgroup = (64, 1, 1))]
fn vector_add(a: &[f32], b: &[f32], c: &mut [f32], n: u32) {
    let i = wave::global_id(0);
    if i < n {
        c[i as usize] = a[i as usize] + b[i as usize];
    }
}
