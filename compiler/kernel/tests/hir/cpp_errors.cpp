#include <wave.h>

[[wave::kernel]]
void broken(const float* src, float* dst, uint32_t n) {
    uint32_t i = wave::global_id(0);
    src[i] = 1.0f;
    float half = dst[i] * 0.5;
    int j = i;
    float* p = dst + 1;
    float* q = new float[4];
    for (uint32_t k = 0; k != n; k++) {
        continue;
    }
    switch (i) {
        case 1:
            if (n > 2) {
                break;
            }
            dst[i] = 0.0f;
            break;
    }
    dst[i] = src[i] + i;
    const uint32_t c = 2;
    c = 3;
}
