/// A 16-bin histogram of (value >> 2) % 16: Local Memory atomics per workgroup, then one
/// device atomic per bin to combine the workgroups.
#[wave::kernel(workgroup = (128, 1, 1))]
fn histogram(data: &[u32], hist: &mut [u32], n: u32) {
    let bins = wave::local_array::<u32, 16>();
    let tid = wave::thread_id(0);
    let i = wave::global_id(0);
    if tid < 16 {
        bins[tid as usize] = 0;
    }
    wave::barrier();
    if i < n {
        let b = (data[i as usize] >> 2) % 16;
        wave::atomic_add(bins, b, 1);
    }
    wave::barrier();
    if tid < 16 {
        let count = bins[tid as usize];
        if count != 0 {
            wave::atomic_add(hist, tid, count);
        }
    }
}
