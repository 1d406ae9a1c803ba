// Tiled SGEMM C = A * B for n x n row-major f32 matrices, n a multiple of 16: the CUDA twin of
// sgemm.wave. One 16x16 tile of C per 16x16 block; each step stages a 16x16 tile of A and of B
// in shared memory between two barriers, then each thread does 16 FMAs (one per k) on them.
// Device memory is one flat byte buffer, and a, b, c are byte offsets into it, as in WAVE.

extern "C" __global__ void __launch_bounds__(256)
sgemm(unsigned char* mem, unsigned a, unsigned b, unsigned c, unsigned n)
{
    __shared__ __align__(16) float As[16][16];
    __shared__ __align__(16) float Bs[16][16];
    const float* A = reinterpret_cast<const float*>(mem + a);
    const float* B = reinterpret_cast<const float*>(mem + b);
    float* C = reinterpret_cast<float*>(mem + c);
    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    const unsigned row = blockIdx.y * 16 + ty;
    const unsigned col = blockIdx.x * 16 + tx;
    float acc = 0.0f;
    // Unrolled as the WAVE code is: the k loop fully (by hand there), the tile loop not at all.
#pragma unroll 1
    for (unsigned t = 0; t < n; t += 16) {
        As[ty][tx] = A[row * n + t + tx];
        Bs[ty][tx] = B[(t + ty) * n + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < 16; ++k)
            acc = fmaf(As[ty][k], Bs[k][tx], acc);
        __syncthreads();
    }
    C[row * n + col] = acc;
}
