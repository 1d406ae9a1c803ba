// TypeScript's spellings: typed arrays, the `wave` module's narrow types, `number` as f64,
// `Math.trunc` division, `>>>`, `Atomics`, `2 ** x`, a private and a local array, a kernel
// wrapped by `wave.kernel` and a static method of a class decorated `@kernel`.
import * as wave from "wave";
import type { u32, i32, f32 } from "wave";

function half(v: number): number {
  return v * 0.5;
}

export const scale = wave.kernel({ workgroup: [64, 1, 1] }, function scale(
  src: Float32Array, dst: Float32Array, counts: Uint32Array, n: u32,
) {
  const i: u32 = wave.globalId();
  if (i >= n) {
    return;
  }
  const tile = wave.localArray(Float32Array, 64);
  const acc = new Float32Array(4);
  tile[wave.threadId()] = src[i];
  wave.barrier();
  const wide: number = half(tile[(wave.threadId() + 1) % 64]);
  const x: f32 = wave.f32(wide) + 2 ** src[i];
  for (let k: u32 = 0; k < 4; k++) {
    acc[k] = x * wave.f32(k);
  }
  const blocks: u32 = Math.trunc(n / 64) + (i >>> 6);
  Atomics.add(counts, blocks % 4, 1);
  dst[i] = Math.max(acc[0], acc[3]) + Math.fround(wide);
});

class Kernels {
  @kernel({ workgroup: [32] })
  static negate(values: Int32Array, n: u32): void {
    const i: u32 = wave.globalId();
    let v: i32 = values[i];
    v = -v >> 1;
    values[i] = i < n ? v : 0;
  }
}
