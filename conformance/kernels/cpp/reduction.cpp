#include <wave.h>

// Sum of data: a tree in Local Memory with a barrier per level gives one partial sum per
// workgroup; the integer counts are summed per wave with wave::reduce_add and combined with
// one device atomic per wave.
[[wave::kernel, wave::workgroup(256, 1, 1)]]
void reduction(const float* data, const int32_t* counts, float* partial, int32_t* total, uint32_t n) {
    wave::local_array<float, 256> buf;
    uint32_t tid = wave::thread_id(0);
    uint32_t i = wave::global_id(0);
    buf[tid] = i < n ? data[i] : 0.0f;
    wave::barrier();
    uint32_t stride = 128;
    while (stride > 0) {
        if (tid < stride) {
            buf[tid] = buf[tid] + buf[tid + stride];
        }
        wave::barrier();
        stride = stride >> 1;
    }
    if (tid == 0) {
        partial[wave::workgroup_id(0)] = buf[0];
    }

    int32_t c = 0;
    if (i < n) {
        c = counts[i];
    }
    int32_t s = wave::reduce_add(c);
    if (wave::lane_id() == 0) {
        wave::atomic_add(total, 0, s);
    }
}
