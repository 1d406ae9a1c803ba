import * as wave from "wave";
import type { u32 } from "wave";

/**
 * Exclusive prefix sum of each 256-element block: wave.prefixSum within each wave, the
 * waves' totals through Local Memory, and each wave adds the totals of the waves before it.
 * Correct at any wave width. Elements past n count as zero.
 */
export const prefixSum = wave.kernel({ workgroup: [256] }, function prefixSum(
  data: Uint32Array, out: Uint32Array, blockSums: Uint32Array, n: u32
) {
  const waveTotals = wave.localArray(Uint32Array, 64);
  const tid: u32 = wave.threadId();
  const i: u32 = wave.globalId();
  const width: u32 = wave.waveWidth();
  const w: u32 = wave.waveId();
  const lane: u32 = wave.laneId();
  let v: u32 = 0;
  if (i < n) {
    v = data[i];
  }
  const p: u32 = wave.prefixSum(v);
  if (lane === width - 1) {
    waveTotals[w] = p + v;
  }
  wave.barrier();
  let offset: u32 = 0;
  for (let k: u32 = 0; k < w; k++) {
    offset += waveTotals[k];
  }
  if (i < n) {
    out[i] = offset + p;
  }
  if (tid === wave.workgroupSize() - 1) {
    blockSums[wave.workgroupId()] = offset + p + v;
  }
});
