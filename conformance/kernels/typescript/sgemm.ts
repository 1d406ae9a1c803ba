import * as wave from "wave";
import type { u32, f32 } from "wave";

/**
 * C = A x B with A m-by-k, B k-by-n and C m-by-n, all row-major. Each 16x16 workgroup
 * computes a 16x16 tile of C, staging 16x16 tiles of A and B through Local Memory with a
 * barrier after each load and after each use. Elements outside the matrices load as zero.
 */
export const sgemm = wave.kernel({ workgroup: [16, 16] }, function sgemm(
  a: Float32Array, b: Float32Array, c: Float32Array, m: u32, n: u32, k: u32
) {
  const tileA = wave.localArray(Float32Array, 256);
  const tileB = wave.localArray(Float32Array, 256);
  const tx: u32 = wave.threadId(0);
  const ty: u32 = wave.threadId(1);
  const col: u32 = wave.workgroupId(0) * 16 + tx;
  const row: u32 = wave.workgroupId(1) * 16 + ty;
  let acc: f32 = 0.0;
  const tiles: u32 = Math.trunc((k + 15) / 16);
  for (let t: u32 = 0; t < tiles; t++) {
    const ka: u32 = t * 16 + tx;
    if (row < m && ka < k) {
      tileA[ty * 16 + tx] = a[row * k + ka];
    } else {
      tileA[ty * 16 + tx] = 0.0;
    }
    const kb: u32 = t * 16 + ty;
    if (kb < k && col < n) {
      tileB[ty * 16 + tx] = b[kb * n + col];
    } else {
      tileB[ty * 16 + tx] = 0.0;
    }
    wave.barrier();
    for (let j: u32 = 0; j < 16; j++) {
      acc += tileA[ty * 16 + j] * tileB[j * 16 + tx];
    }
    wave.barrier();
  }
  if (row < m && col < n) {
    c[row * n + col] = acc;
  }
});
