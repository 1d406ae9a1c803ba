import * as wave from "wave";
import type { u32, f32 } from "wave";

/** y[i] = alpha * x[i] + y[i] for every i below n. */
export const saxpy = wave.kernel({ workgroup: [64] }, function saxpy(
  alpha: f32, x: Float32Array, y: Float32Array, n: u32
) {
  const i: u32 = wave.globalId();
  if (i >= n) {
    return;
  }
  y[i] = alpha * x[i] + y[i];
});
