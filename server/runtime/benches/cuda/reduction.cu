// The CUDA twin of conformance/kernels/*/reduction (see vector_add.cu for the conventions): a
// shared-memory tree per block for the floats, a warp reduction and one atomic per warp for
// the integer counts.
extern "C" __global__ void __launch_bounds__(256)
reduction(unsigned char* mem, unsigned data, unsigned counts, unsigned partial, unsigned total,
          unsigned n)
{
    __shared__ float buf[256];
    const float* D = reinterpret_cast<const float*>(mem + data);
    const int* C = reinterpret_cast<const int*>(mem + counts);
    float* P = reinterpret_cast<float*>(mem + partial);
    int* T = reinterpret_cast<int*>(mem + total);
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[tid] = i < n ? D[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = 128; stride > 0; stride >>= 1) {
        if (tid < stride)
            buf[tid] = buf[tid] + buf[tid + stride];
        __syncthreads();
    }
    if (tid == 0)
        P[blockIdx.x] = buf[0];
    int c = 0;
    if (i < n)
        c = C[i];
    int s = __reduce_add_sync(0xffffffffu, c);
    if ((tid & 31) == 0)
        atomicAdd(&T[0], s);
}
