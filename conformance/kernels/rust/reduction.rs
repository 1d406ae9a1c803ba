/// Sum of data: a tree in Local Memory with a barrier per level gives one partial sum per
/// workgroup; the integer counts are summed per wave with wave::reduce_add and combined with
/// one device atomic per wave.
#[wave::kernel(workgroup = (256, 1, 1))]
fn reduction(data: &[f32], counts: &[i32], partial: &mut [f32], total: &mut [i32], n: u32) {
    let buf = wave::local_array::<f32, 256>();
    let tid = wave::thread_id(0);
    let i = wave::global_id(0);
    buf[tid as usize] = if i < n { data[i as usize] } else { 0.0 };
    wave::barrier();
    let mut stride: u32 = 128;
    while stride > 0 {
        if tid < stride {
            buf[tid as usize] = buf[tid as usize] + buf[(tid + stride) as usize];
        }
        wave::barrier();
        stride = stride >> 1;
    }
    if tid == 0 {
        partial[wave::workgroup_id(0) as usize] = buf[0];
    }

    let mut c: i32 = 0;
    if i < n {
        c = counts[i as usize];
    }
    let s = wave::reduce_add(c);
    if wave::lane_id() == 0 {
        wave::atomic_add(total, 0, s);
    }
}
