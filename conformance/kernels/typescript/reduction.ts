import * as wave from "wave";
import type { u32, i32 } from "wave";

/**
 * Sum of data: a tree in Local Memory with a barrier per level gives one partial sum per
 * workgroup; the integer counts are summed per wave with wave.reduceAdd and combined with
 * one device atomic per wave.
 */
export const reduction = wave.kernel({ workgroup: [256] }, function reduction(
  data: Float32Array, counts: Int32Array, partial: Float32Array, total: Int32Array, n: u32
) {
  const buf = wave.localArray(Float32Array, 256);
  const tid: u32 = wave.threadId();
  const i: u32 = wave.globalId();
  buf[tid] = i < n ? data[i] : 0.0;
  wave.barrier();
  let stride: u32 = 128;
  while (stride > 0) {
    if (tid < stride) {
      buf[tid] = buf[tid] + buf[tid + stride];
    }
    wave.barrier();
    stride = stride >>> 1;
  }
  if (tid === 0) {
    partial[wave.workgroupId()] = buf[0];
  }

  let c: i32 = 0;
  if (i < n) {
    c = counts[i];
  }
  const s: i32 = wave.reduceAdd(c);
  if (wave.laneId() === 0) {
    Atomics.add(total, 0, s);
  }
});
