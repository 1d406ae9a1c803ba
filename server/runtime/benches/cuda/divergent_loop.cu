// The CUDA twin of conformance/kernels/*/divergent_loop (see vector_add.cu for the conventions).
extern "C" __global__ void __launch_bounds__(32)
divergent_loop(unsigned char* mem, unsigned out, unsigned steps, unsigned n, unsigned limit)
{
    unsigned* O = reinterpret_cast<unsigned*>(mem + out);
    unsigned* S = reinterpret_cast<unsigned*>(mem + steps);
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned total = 0;
    for (unsigned k = 0; k < i % 23 + 1; ++k) {
        if (k % 3 == 2)
            continue;
        if (total > limit)
            break;
        if ((k & 4) != 0) {
            for (unsigned j = 0; j < k; ++j) {
                if (j == i % 5)
                    break;
                total += j;
            }
            continue;
        }
        total += k * k;
    }
    O[i] = total;
    unsigned x = i + 1, count = 0, odd = 0;
    while (x != 1) {
        count += 1;
        if (count > 60)
            break;
        if (x % 2 == 0) {
            x = x >> 1;
            continue;
        }
        odd += 1;
        x = 3 * x + 1;
    }
    S[2 * i] = count;
    S[2 * i + 1] = odd * 1000 + x;
}
