// The CUDA twin of conformance/kernels/*/sgemm (see vector_add.cu for the conventions): 16x16
// tiles of A and B staged in shared memory between barriers, zeros outside the matrices.
extern "C" __global__ void __launch_bounds__(256)
sgemm(unsigned char* mem, unsigned a, unsigned b, unsigned c, unsigned m, unsigned n, unsigned k)
{
    __shared__ float tile_a[256];
    __shared__ float tile_b[256];
    const float* A = reinterpret_cast<const float*>(mem + a);
    const float* B = reinterpret_cast<const float*>(mem + b);
    float* C = reinterpret_cast<float*>(mem + c);
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned col = blockIdx.x * 16 + tx;
    unsigned row = blockIdx.y * 16 + ty;
    float acc = 0.0f;
    unsigned tiles = (k + 15) / 16;
    for (unsigned t = 0; t < tiles; ++t) {
        unsigned ka = t * 16 + tx;
        if (row < m && ka < k)
            tile_a[ty * 16 + tx] = A[row * k + ka];
        else
            tile_a[ty * 16 + tx] = 0.0f;
        unsigned kb = t * 16 + ty;
        if (kb < k && col < n)
            tile_b[ty * 16 + tx] = B[kb * n + col];
        else
            tile_b[ty * 16 + tx] = 0.0f;
        __syncthreads();
        for (unsigned j = 0; j < 16; ++j)
            acc += tile_a[ty * 16 + j] * tile_b[j * 16 + tx];
        __syncthreads();
    }
    if (row < m && col < n)
        C[row * n + col] = acc;
}
