import * as wave from "wave";
import type { u32 } from "wave";

/**
 * A 16-bin histogram of (value >>> 2) % 16: Local Memory atomics per workgroup, then one
 * device atomic per bin to combine the workgroups.
 */
export const histogram = wave.kernel({ workgroup: [128] }, function histogram(
  data: Uint32Array, hist: Uint32Array, n: u32
) {
  const bins = wave.localArray(Uint32Array, 16);
  const tid: u32 = wave.threadId();
  const i: u32 = wave.globalId();
  if (tid < 16) {
    bins[tid] = 0;
  }
  wave.barrier();
  if (i < n) {
    const b: u32 = (data[i] >>> 2) % 16;
    Atomics.add(bins, b, 1);
  }
  wave.barrier();
  if (tid < 16) {
    const count: u32 = bins[tid];
    if (count !== 0) {
      Atomics.add(hist, tid, count);
    }
  }
});
