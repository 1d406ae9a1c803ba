/// Exclusive prefix sum of each 256-element block: wave::prefix_sum within each wave, the
/// waves' totals through Local Memory, and each wave adds the totals of the waves before it.
/// Correct at any wave width. Elements past n count as zero.
#[wave::kernel(workgroup = (256, 1, 1))]
fn prefix_sum(data: &[u32], out: &mut [u32], block_sums: &mut [u32], n: u32) {
    let wave_totals = wave::local_array::<u32, 64>();
    let tid = wave::thread_id(0);
    let i = wave::global_id(0);
    let width = wave::wave_width();
    let w = wave::wave_id();
    let lane = wave::lane_id();
    let mut v: u32 = 0;
    if i < n {
        v = data[i as usize];
    }
    let p = wave::prefix_sum(v);
    if lane == width - 1 {
        wave_totals[w as usize] = p + v;
    }
    wave::barrier();
    let mut offset: u32 = 0;
    for k in 0..w {
        offset += wave_totals[k as usize];
    }
    if i < n {
        out[i as usize] = offset + p;
    }
    if tid == wave::workgroup_size(0) - 1 {
        block_sums[wave::workgroup_id(0) as usize] = offset + p + v;
    }
}
