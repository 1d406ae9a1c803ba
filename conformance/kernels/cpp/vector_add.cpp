#include <wave.h>

// c[i] = a[i] + b[i] for every i below n; the threads past n store nothing.
[[wave::kernel, wave::workgroup(64, 1, 1)]]
void vector_add(const float* a, const float* b, float* c, uint32_t n) {
    uint32_t i = wave::global_id(0);
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
