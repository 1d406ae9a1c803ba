// C++'s spellings: pointers, attributes, `auto`, casts, the usual arithmetic conversions,
// `switch` with fall-through, `do`/`while`, counted and general `for`, a private array, a
// local array and a function template instantiated on use.
#include <wave.h>

template <typename T>
T square(T v) {
    return v * v;
}

[[wave::kernel, wave::workgroup(64, 1, 1)]]
void features(const float* src, float* dst, uint32_t* flags, unsigned n) {
    uint32_t i = wave::global_id(0);
    if (i >= n) {
        return;
    }
    wave::local_array<float, 64> tile;
    float acc[4] = {};
    tile[wave::thread_id(0)] = src[i];
    wave::barrier();
    auto x = tile[(wave::thread_id(0) + 1) % 64];
    double wide = x * 0.5;
    int steps = 0;
    do {
        steps++;
    } while (steps < 3);
    switch (i % 4) {
        case 0:
            flags[i] = 1;
        case 1:
            flags[i] = 2;
            break;
        default:
            flags[i] = (uint32_t)steps;
    }
    for (uint32_t k = 0; k < 4; k += 2) {
        acc[k] = square(x) + square<float>((float)k);
    }
    for (int j = 0; j * j < 10; j++) {
        acc[1] += 1.0f;
    }
    dst[i] = static_cast<float>(wide) + std::max(acc[0], acc[1]) + sqrtf(acc[2]);
}
