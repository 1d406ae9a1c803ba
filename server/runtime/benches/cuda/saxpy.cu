// The CUDA twin of conformance/kernels/*/saxpy (see vector_add.cu for the conventions).
extern "C" __global__ void __launch_bounds__(64)
saxpy(unsigned char* mem, float alpha, unsigned x, unsigned y, unsigned n)
{
    const float* X = reinterpret_cast<const float*>(mem + x);
    float* Y = reinterpret_cast<float*>(mem + y);
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    Y[i] = alpha * X[i] + Y[i];
}
