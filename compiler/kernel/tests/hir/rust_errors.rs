#[wave::kernel]
fn broken<T>(src: &[f32], dst: &mut [f32], n: u32) {
    let i = wave::global_id(0);
    src[i as usize] = 1.0;
    let k = 3;
    k = 4;
    let f = |v: f32| v * 2.0;
    let m = dst.len();
    for j in 0..=n {
        dst[j as usize] = 0.0;
    }
    let z = i + (n as i32);
    match i {
        v if v > 2 => {}
        _ => {}
    }
    unsafe {}
    q = 1;
    while let Some(v) = x {}
}
