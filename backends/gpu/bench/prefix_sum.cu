// Exclusive prefix sum (wrapping) of n u32 values: the CUDA twin of prefix_sum.wave, in the
// same three kernels launched one after another:
//   scan_blocks  grid n/1024: the exclusive scan of each 1024-value block, written to `output`,
//                and each block's total to sums[block];
//   scan_sums    grid 1: the exclusive scan of those n/1024 totals, in place;
//   add_offsets  grid n/1024: adds its block's scanned total to every value of the block.
// Needs 256 threads per block and n a multiple of 4096, and input and output must not overlap.
// Device memory is one flat byte buffer, and every pointer is a byte offset into it, as in WAVE.
// Each loop is unrolled exactly as much as its WAVE counterpart: fully for the shuffle steps of
// the warp scan (one wave_prefix_sum), not at all (`#pragma unroll 1`) for the loops.

#define FULL_MASK 0xffffffffu

// Exclusive scan over the warp, by shuffles up, as WAVE's wave_prefix_sum is lowered.
__device__ __forceinline__ unsigned warp_exclusive_scan(unsigned t, unsigned lane)
{
    unsigned v = t;
#pragma unroll
    for (unsigned d = 1; d < 32; d <<= 1) {
        const unsigned u = __shfl_up_sync(FULL_MASK, v, d);
        if (lane >= d)
            v += u;
    }
    return v - t;
}

// Each thread's total t in; the sum of the totals of the block's threads before this one out.
// The last lane of each warp puts the warp's total in shared memory, and after a barrier each
// thread adds the totals of the warps before its own.
__device__ __forceinline__ unsigned scan_block_total(unsigned t, unsigned* warp_totals)
{
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned s = warp_exclusive_scan(t, lane);
    if (lane == 31)
        warp_totals[warp] = s + t;
    __syncthreads();
#pragma unroll 1
    for (unsigned k = 0; k < warp; ++k)
        s += warp_totals[k];
    return s;
}

extern "C" __global__ void __launch_bounds__(256)
scan_blocks(unsigned char* mem, unsigned input, unsigned output, unsigned sums)
{
    __shared__ unsigned warp_totals[8];
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    uint4 x = reinterpret_cast<const uint4*>(mem + input)[i];
    x.y += x.x;
    x.z += x.y;
    x.w += x.z;
    const unsigned s = scan_block_total(x.w, warp_totals);
    reinterpret_cast<uint4*>(mem + output)[i] = make_uint4(s, s + x.x, s + x.y, s + x.z);
    if (threadIdx.x == blockDim.x - 1)
        reinterpret_cast<unsigned*>(mem + sums)[blockIdx.x] = s + x.w;
}

extern "C" __global__ void __launch_bounds__(256)
scan_sums(unsigned char* mem, unsigned sums, unsigned count)
{
    __shared__ unsigned warp_totals[8];
    uint4* v = reinterpret_cast<uint4*>(mem + sums);
    const unsigned vectors = count / 4;
    const unsigned per = (vectors + blockDim.x - 1) / blockDim.x;
    const unsigned first = threadIdx.x * per;
    const unsigned end = min(first + per, vectors);
    unsigned t = 0;
#pragma unroll 1
    for (unsigned i = first; i < end; ++i) {
        const uint4 x = v[i];
        t += (x.x + x.y) + (x.z + x.w);
    }
    unsigned s = scan_block_total(t, warp_totals);
#pragma unroll 1
    for (unsigned i = first; i < end; ++i) {
        const uint4 x = v[i];
        uint4 y;
        y.x = s;
        y.y = y.x + x.x;
        y.z = y.y + x.y;
        y.w = y.z + x.z;
        s = y.w + x.w;
        v[i] = y;
    }
}

extern "C" __global__ void __launch_bounds__(256)
add_offsets(unsigned char* mem, unsigned output, unsigned sums)
{
    const unsigned offset = reinterpret_cast<const unsigned*>(mem + sums)[blockIdx.x];
    uint4* v = reinterpret_cast<uint4*>(mem + output);
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    uint4 x = v[i];
    x.x += offset;
    x.y += offset;
    x.z += offset;
    x.w += offset;
    v[i] = x;
}
