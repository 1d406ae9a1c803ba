//! Rust's spellings: slices, `as`, shadowing, `loop`, `step_by`, `match` (as a statement and
//! as a value), `if` as a value, method-style math, a private array and a helper whose final
//! expression is its value.

fn lerp(a: f32, b: f32, t: f32) -> f32 {
    a.mul_add(1.0 - t, b * t)
}

#[wave::kernel(workgroup = (64, 1, 1))]
fn features(src: &[f32], dst: &mut [f32], flags: &mut [u32], n: u32) {
    let i = wave::global_id(0);
    if i >= n {
        return;
    }
    let x = src[i as usize];
    let x = x.abs().sqrt(); // a new `x`
    let mut acc = [0.0f32; 4];
    for k in (0..4u32).step_by(2) {
        acc[k as usize] = x * (k as f32);
    }
    let mut steps: u32 = 0;
    loop {
        steps += 1;
        if steps > i % 5 {
            break;
        }
    }
    let kind: u32 = match i % 8 {
        0 | 1 => 10,
        2..=4 => 20,
        _ => 30,
    };
    match steps {
        1 => flags[i as usize] = kind,
        2 | 3 => {
            flags[i as usize] = kind + 1;
        }
        _ => {}
    }
    let y = if x > 1.0 { lerp(x, acc[2], 0.25) } else { -x };
    dst[i as usize] = y.max(0.5) + (!i & 1) as f32;
}
