// The constructs of issue 22, as C++ writes them (see tests/constructs.rs for them run).
#define TILE 8
constexpr float SCALE = 0.5f;

uint32_t first_divisor(uint32_t x) {
    if (x < 4) return 1;
    for (uint32_t k = 2; k < 16; k++) {
        if (x % k == 0) return k;
    }
    return 0;
}

[[wave::kernel, wave::workgroup(32, 1, 1)]]
void constructs(const uint8_t* inp, float* out, uint16_t* bits, half h) {
    uint32_t i = wave::global_id(0);
    uint32_t t = wave::thread_id(0);
    wave::local_array<float, 4, TILE> tile;
    float x = (float)inp[i] * SCALE;
    float a = x, b = -x, c, d;
    std::swap(a, b);
    c = d = 0.0f;
    tile[t / TILE][t % TILE] = expf(a) + std::log(x + 1.0f) + tanhf(b);
    wave::barrier();
    c = powf(tile[t % 4][t / 4], 2.0f) + std::pow(x, 1.5f) + (float)M_PI;
    d = wave::reduce_max(c) + wave::prefix_sum(c) + (float)h;
    bits[i] = (uint32_t)(__builtin_popcount(inp[i]) + std::countl_zero(i) + __builtin_ctz(i)) + first_divisor(i);
    out[i] = std::fmin(std::fmin(c, d), x) + std::fmax(std::fmax(a, b), 1.0f);
}
