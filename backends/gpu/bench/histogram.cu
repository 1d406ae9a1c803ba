// 256-bin histogram of n bytes, added to the 256 u32 bins at byte offset `bins`, which the
// caller zeroes: the CUDA twin of histogram.wave. Each block counts into its own bins in
// shared memory with shared atomics, then adds each bin to device memory with one atomic.
// Each of the G = grid * 256 threads walks the data in steps of 16 G bytes, reading one
// 16-byte vector per step and counting its 16 bytes. Needs 256 threads per block (one bin
// each), n a multiple of 16 G, and n > 0.
// Device memory is one flat byte buffer, and data, bins are byte offsets into it, as in WAVE.

__device__ __forceinline__ void count_bytes(unsigned* local_bins, unsigned w)
{
    atomicAdd(&local_bins[w & 255], 1u);
    atomicAdd(&local_bins[(w >> 8) & 255], 1u);
    atomicAdd(&local_bins[(w >> 16) & 255], 1u);
    atomicAdd(&local_bins[w >> 24], 1u);
}

extern "C" __global__ void __launch_bounds__(256)
histogram(unsigned char* mem, unsigned data, unsigned bins, unsigned n)
{
    __shared__ unsigned local_bins[256];
    local_bins[threadIdx.x] = 0;
    __syncthreads();
    const unsigned G = gridDim.x * blockDim.x;
    const uint4* v = reinterpret_cast<const uint4*>(mem + data);
    const unsigned end = n / 16;
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    // One vector per step, as in the WAVE loop.
#pragma unroll 1
    do {
        const uint4 x = v[i];
        count_bytes(local_bins, x.x);
        count_bytes(local_bins, x.y);
        count_bytes(local_bins, x.z);
        count_bytes(local_bins, x.w);
        i += G;
    } while (i < end);
    __syncthreads();
    atomicAdd(reinterpret_cast<unsigned*>(mem + bins) + threadIdx.x, local_bins[threadIdx.x]);
}
