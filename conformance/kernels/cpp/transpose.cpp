#include <wave.h>

// dst (width rows of height) = the transpose of src (height rows of width), through a
// 16x16 tile in Local Memory padded to 17 columns, with a barrier between the load and the
// transposed store. The edge tiles are partial.
[[wave::kernel, wave::workgroup(16, 16, 1)]]
void transpose(const float* src, float* dst, uint32_t width, uint32_t height) {
    wave::local_array<float, 272> tile;
    uint32_t tx = wave::thread_id(0);
    uint32_t ty = wave::thread_id(1);
    uint32_t x = wave::workgroup_id(0) * 16 + tx;
    uint32_t y = wave::workgroup_id(1) * 16 + ty;
    if (x < width && y < height) {
        tile[ty * 17 + tx] = src[y * width + x];
    }
    wave::barrier();
    uint32_t ox = wave::workgroup_id(1) * 16 + tx;
    uint32_t oy = wave::workgroup_id(0) * 16 + ty;
    if (ox < height && oy < width) {
        dst[oy * height + ox] = tile[tx * 17 + ty];
    }
}
