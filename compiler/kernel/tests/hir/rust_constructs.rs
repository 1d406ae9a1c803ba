// The constructs of issue 22, as Rust writes them (see tests/constructs.rs for them run).
const TILE: u32 = 8;
const SCALE: f32 = 0.5;

fn first_divisor(x: u32) -> u32 {
    if x < 4 {
        return 1;
    }
    for k in 2..16 {
        if x % k == 0 {
            return k;
        }
    }
    0
}

#[wave::kernel(workgroup = (32, 1, 1))]
fn constructs(inp: &[u8], out: &mut [f32], bits: &mut [u16], h: f16) {
    let i = wave::global_id(0);
    let t = wave::thread_id(0);
    let tile = wave::local_array::<f32, 4, TILE>();
    let x = inp[i as usize] as f32 * SCALE;
    let (mut a, mut b) = (x, -x);
    (a, b) = (b, a);
    tile[(t / TILE) as usize][(t % TILE) as usize] = a.exp() + (x + 1.0).ln() + b.tanh();
    wave::barrier();
    let c = tile[(t % 4) as usize][(t / 4) as usize].powi(2) + x.powf(1.5) + std::f32::consts::PI;
    let d = wave::reduce_max(c) + wave::prefix_sum(c) + h as f32;
    bits[i as usize] = (inp[i as usize] as u32).count_ones() + i.leading_zeros() + i.trailing_zeros() + first_divisor(i);
    out[i as usize] = c.min(d).min(x) + a.max(b).max(1.0);
}
