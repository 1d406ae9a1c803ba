// The constructs of issue 22, as TypeScript writes them (see tests/constructs.rs for them run).
import * as wave from "wave";
import type { f16, f32, u32 } from "wave";

const TILE = 8;
const SCALE: f32 = 0.5;

function firstDivisor(x: u32): u32 {
  if (x < 4) {
    return 1;
  }
  for (let k: u32 = 2; k < 16; k++) {
    if (x % k === 0) {
      return k;
    }
  }
  return 0;
}

export const constructs = wave.kernel({ workgroup: [32] }, function constructs(
  inp: Uint8Array, out: Float32Array, bits: Uint16Array, h: f16,
) {
  const i: u32 = wave.globalId();
  const t: u32 = wave.threadId();
  const tile = wave.localArray(Float32Array, 4, TILE);
  const x: f32 = wave.f32(inp[i]) * SCALE;
  let [a, b] = [x, -x];
  [a, b] = [b, a];
  let c: f32 = wave.f32(0);
  let d: f32 = wave.f32(0);
  c = d = wave.f32(0);
  tile[Math.trunc(t / TILE)][t % TILE] = Math.exp(a) + Math.log(x + wave.f32(1)) + Math.tanh(b);
  wave.barrier();
  c = tile[t % 4][Math.trunc(t / 4)] ** 2 + Math.pow(x, wave.f32(1.5)) + wave.f32(Math.PI);
  d = wave.reduceMax(c) + wave.prefixSum(c) + wave.f32(h);
  bits[i] = wave.popcount(inp[i]) + Math.clz32(i) + wave.ctz(i) + firstDivisor(i);
  out[i] = Math.min(c, d, x) + Math.max(a, b, wave.f32(1));
});
