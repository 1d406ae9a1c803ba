#include <wave.h>

// Per-thread trip counts: a for loop with continue and break inside ifs, a nested loop
// that breaks early, and a while loop (Collatz steps) with continue and a break.
[[wave::kernel, wave::workgroup(32, 1, 1)]]
void divergent_loop(uint32_t* out, uint32_t* steps, uint32_t n, uint32_t limit) {
    uint32_t i = wave::global_id(0);
    if (i >= n) {
        return;
    }
    uint32_t total = 0;
    for (uint32_t k = 0; k < i % 23 + 1; k++) {
        if (k % 3 == 2) {
            continue;
        }
        if (total > limit) {
            break;
        }
        if ((k & 4) != 0) {
            for (uint32_t j = 0; j < k; j++) {
                if (j == i % 5) {
                    break;
                }
                total += j;
            }
            continue;
        }
        total += k * k;
    }
    out[i] = total;

    uint32_t x = i + 1;
    uint32_t count = 0;
    uint32_t odd = 0;
    while (x != 1) {
        count += 1;
        if (count > 60) {
            break;
        }
        if (x % 2 == 0) {
            x = x >> 1;
            continue;
        }
        odd += 1;
        x = 3 * x + 1;
    }
    steps[2 * i] = count;
    steps[2 * i + 1] = odd * 1000 + x;
}
