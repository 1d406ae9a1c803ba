import * as wave from "wave";
import type { u32 } from "wave";

export const broken = wave.kernel(function broken(src: Float32Array, out: Uint32Array, n: u32) {
  const i: u32 = wave.globalId();
  const q: u32 = n / 2;
  const s: u32 = i >> 1;
  const w = 0.5;
  out[i] = w;
  const j = i as u32;
  if (i == n) {
    return;
  }
  out[w] = 1;
  const text = "hello";
  i = 3;
  const z: u32 = src[i];
});
