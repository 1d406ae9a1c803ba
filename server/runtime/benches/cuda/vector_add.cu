// The CUDA twin of conformance/kernels/*/vector_add, written as a CUDA user writes it. Device
// memory is one byte buffer and every buffer parameter a byte offset into it, as in WAVE.
extern "C" __global__ void __launch_bounds__(64)
vector_add(unsigned char* mem, unsigned a, unsigned b, unsigned c, unsigned n)
{
    const float* A = reinterpret_cast<const float*>(mem + a);
    const float* B = reinterpret_cast<const float*>(mem + b);
    float* C = reinterpret_cast<float*>(mem + c);
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        C[i] = A[i] + B[i];
}
