#include <wave.h>

// A 16-bin histogram of (value >> 2) % 16: Local Memory atomics per workgroup, then one
// device atomic per bin to combine the workgroups.
[[wave::kernel, wave::workgroup(128, 1, 1)]]
void histogram(const uint32_t* data, uint32_t* hist, uint32_t n) {
    wave::local_array<uint32_t, 16> bins;
    uint32_t tid = wave::thread_id(0);
    uint32_t i = wave::global_id(0);
    if (tid < 16) {
        bins[tid] = 0;
    }
    wave::barrier();
    if (i < n) {
        uint32_t b = (data[i] >> 2) % 16;
        wave::atomic_add(bins, b, 1);
    }
    wave::barrier();
    if (tid < 16) {
        uint32_t count = bins[tid];
        if (count != 0) {
            wave::atomic_add(hist, tid, count);
        }
    }
}
