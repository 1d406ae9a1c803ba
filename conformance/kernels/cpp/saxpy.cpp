#include <wave.h>

// y[i] = alpha * x[i] + y[i] for every i below n.
[[wave::kernel, wave::workgroup(64, 1, 1)]]
void saxpy(float alpha, const float* x, float* y, uint32_t n) {
    uint32_t i = wave::global_id(0);
    if (i >= n) {
        return;
    }
    y[i] = alpha * x[i] + y[i];
}
