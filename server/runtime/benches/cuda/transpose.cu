// The CUDA twin of conformance/kernels/*/transpose (see vector_add.cu for the conventions).
extern "C" __global__ void __launch_bounds__(256)
transpose(unsigned char* mem, unsigned src, unsigned dst, unsigned width, unsigned height)
{
    __shared__ float tile[16 * 17];
    const float* S = reinterpret_cast<const float*>(mem + src);
    float* D = reinterpret_cast<float*>(mem + dst);
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned x = blockIdx.x * 16 + tx;
    unsigned y = blockIdx.y * 16 + ty;
    if (x < width && y < height)
        tile[ty * 17 + tx] = S[y * width + x];
    __syncthreads();
    unsigned ox = blockIdx.y * 16 + tx;
    unsigned oy = blockIdx.x * 16 + ty;
    if (ox < height && oy < width)
        D[oy * height + ox] = tile[tx * 17 + ty];
}
