// Sum of n u32 values (wrapping) added to the u32 at byte offset `out`, which the caller
// zeroes: the CUDA twin of reduce.wave. Each of the G = grid * 256 threads walks the data in
// steps of 64 G bytes, reading four 16-byte vectors G vectors apart at each step; then a warp
// reduction and one atomic per warp. Needs n a multiple of 16 G and n > 0.
// Device memory is one flat byte buffer, and data, out are byte offsets into it, as in WAVE.

extern "C" __global__ void __launch_bounds__(256)
reduce(unsigned char* mem, unsigned data, unsigned out, unsigned n)
{
    const unsigned G = gridDim.x * blockDim.x;
    const uint4* v = reinterpret_cast<const uint4*>(mem + data);
    const unsigned end = n / 4;
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned sum = 0;
    // Not unrolled, as the WAVE loop is not: both bodies hold the same four independent loads.
#pragma unroll 1
    do {
        const uint4 x0 = v[i], x1 = v[i + G], x2 = v[i + 2 * G], x3 = v[i + 3 * G];
        sum += ((x0.x + x0.y) + (x0.z + x0.w)) + ((x1.x + x1.y) + (x1.z + x1.w))
             + ((x2.x + x2.y) + (x2.z + x2.w)) + ((x3.x + x3.y) + (x3.z + x3.w));
        i += 4 * G;
    } while (i < end);
    sum = __reduce_add_sync(0xffffffffu, sum);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(reinterpret_cast<unsigned*>(mem + out), sum);
}
