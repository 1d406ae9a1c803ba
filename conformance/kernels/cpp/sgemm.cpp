#include <wave.h>

// C = A x B with A m-by-k, B k-by-n and C m-by-n, all row-major. Each 16x16 workgroup
// computes a 16x16 tile of C, staging 16x16 tiles of A and B through Local Memory with a
// barrier after each load and after each use. Elements outside the matrices load as zero.
[[wave::kernel, wave::workgroup(16, 16, 1)]]
void sgemm(const float* a, const float* b, float* c, uint32_t m, uint32_t n, uint32_t k) {
    wave::local_array<float, 256> tile_a;
    wave::local_array<float, 256> tile_b;
    uint32_t tx = wave::thread_id(0);
    uint32_t ty = wave::thread_id(1);
    uint32_t col = wave::workgroup_id(0) * 16 + tx;
    uint32_t row = wave::workgroup_id(1) * 16 + ty;
    float acc = 0.0f;
    uint32_t tiles = (k + 15) / 16;
    for (uint32_t t = 0; t < tiles; t++) {
        uint32_t ka = t * 16 + tx;
        if (row < m && ka < k) {
            tile_a[ty * 16 + tx] = a[row * k + ka];
        } else {
            tile_a[ty * 16 + tx] = 0.0f;
        }
        uint32_t kb = t * 16 + ty;
        if (kb < k && col < n) {
            tile_b[ty * 16 + tx] = b[kb * n + col];
        } else {
            tile_b[ty * 16 + tx] = 0.0f;
        }
        wave::barrier();
        for (uint32_t j = 0; j < 16; j++) {
            acc += tile_a[ty * 16 + j] * tile_b[j * 16 + tx];
        }
        wave::barrier();
    }
    if (row < m && col < n) {
        c[row * n + col] = acc;
    }
}
