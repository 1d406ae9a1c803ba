#include <wave.h>

// Exclusive prefix sum of each 256-element block: wave::prefix_sum within each wave, the
// waves' totals through Local Memory, and each wave adds the totals of the waves before it.
// Correct at any wave width. Elements past n count as zero.
[[wave::kernel, wave::workgroup(256, 1, 1)]]
void prefix_sum(const uint32_t* data, uint32_t* out, uint32_t* block_sums, uint32_t n) {
    wave::local_array<uint32_t, 64> wave_totals;
    uint32_t tid = wave::thread_id(0);
    uint32_t i = wave::global_id(0);
    uint32_t width = wave::wave_width();
    uint32_t w = wave::wave_id();
    uint32_t lane = wave::lane_id();
    uint32_t v = 0;
    if (i < n) {
        v = data[i];
    }
    uint32_t p = wave::prefix_sum(v);
    if (lane == width - 1) {
        wave_totals[w] = p + v;
    }
    wave::barrier();
    uint32_t offset = 0;
    for (uint32_t k = 0; k < w; k++) {
        offset += wave_totals[k];
    }
    if (i < n) {
        out[i] = offset + p;
    }
    if (tid == wave::workgroup_size(0) - 1) {
        block_sums[wave::workgroup_id(0)] = offset + p + v;
    }
}
