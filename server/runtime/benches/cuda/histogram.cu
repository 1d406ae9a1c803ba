// The CUDA twin of conformance/kernels/*/histogram (see vector_add.cu for the conventions).
extern "C" __global__ void __launch_bounds__(128)
histogram(unsigned char* mem, unsigned data, unsigned hist, unsigned n)
{
    __shared__ unsigned bins[16];
    const unsigned* D = reinterpret_cast<const unsigned*>(mem + data);
    unsigned* H = reinterpret_cast<unsigned*>(mem + hist);
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < 16)
        bins[tid] = 0;
    __syncthreads();
    if (i < n) {
        unsigned b = (D[i] >> 2) % 16;
        atomicAdd(&bins[b], 1u);
    }
    __syncthreads();
    if (tid < 16) {
        unsigned count = bins[tid];
        if (count != 0)
            atomicAdd(&H[tid], count);
    }
}
