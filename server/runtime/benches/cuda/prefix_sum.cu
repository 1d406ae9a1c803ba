// The CUDA twin of conformance/kernels/*/prefix_sum (see vector_add.cu for the conventions):
// an exclusive scan per warp with shuffles, the warps' totals through shared memory.
extern "C" __global__ void __launch_bounds__(256)
prefix_sum(unsigned char* mem, unsigned data, unsigned out, unsigned block_sums, unsigned n)
{
    __shared__ unsigned wave_totals[64];
    const unsigned* D = reinterpret_cast<const unsigned*>(mem + data);
    unsigned* O = reinterpret_cast<unsigned*>(mem + out);
    unsigned* S = reinterpret_cast<unsigned*>(mem + block_sums);
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned w = tid / warpSize, lane = tid % warpSize;
    unsigned v = 0;
    if (i < n)
        v = D[i];
    unsigned p = v;
    for (unsigned d = 1; d < warpSize; d <<= 1) {
        unsigned up = __shfl_up_sync(0xffffffffu, p, d);
        if (lane >= d)
            p += up;
    }
    p -= v;
    if (lane == warpSize - 1)
        wave_totals[w] = p + v;
    __syncthreads();
    unsigned offset = 0;
    for (unsigned k = 0; k < w; ++k)
        offset += wave_totals[k];
    if (i < n)
        O[i] = offset + p;
    if (tid == blockDim.x - 1)
        S[blockIdx.x] = offset + p + v;
}
