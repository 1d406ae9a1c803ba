import * as wave from "wave";
import type { u32 } from "wave";

/** c[i] = a[i] + b[i] for every i below n; the threads past n store nothing. */
export const vectorAdd = wave.kernel({ workgroup: [64] }, function vectorAdd(
  a: Float32Array, b: Float32Array, c: Float32Array, n: u32
) {
  const i: u32 = wave.globalId();
  if (i < n) {
    c[i] = a[i] + b[i];
  }
});
