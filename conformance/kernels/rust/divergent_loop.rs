/// Per-thread trip counts: a for loop with continue and break inside ifs, a nested loop
/// that breaks early, and a while loop (Collatz steps) with continue and a break.
#[wave::kernel(workgroup = (32, 1, 1))]
fn divergent_loop(out: &mut [u32], steps: &mut [u32], n: u32, limit: u32) {
    let i = wave::global_id(0);
    if i >= n {
        return;
    }
    let mut total: u32 = 0;
    for k in 0..(i % 23 + 1) {
        if k % 3 == 2 {
            continue;
        }
        if total > limit {
            break;
        }
        if (k & 4) != 0 {
            for j in 0..k {
                if j == i % 5 {
                    break;
                }
                total += j;
            }
            continue;
        }
        total += k * k;
    }
    out[i as usize] = total;

    let mut x = i + 1;
    let mut count: u32 = 0;
    let mut odd: u32 = 0;
    while x != 1 {
        count += 1;
        if count > 60 {
            break;
        }
        if x % 2 == 0 {
            x = x >> 1;
            continue;
        }
        odd += 1;
        x = 3 * x + 1;
    }
    steps[(2 * i) as usize] = count;
    steps[(2 * i + 1) as usize] = odd * 1000 + x;
}
