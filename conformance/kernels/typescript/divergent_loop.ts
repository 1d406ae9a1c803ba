import * as wave from "wave";
import type { u32 } from "wave";

/**
 * Per-thread trip counts: a for loop with continue and break inside ifs, a nested loop
 * that breaks early, and a while loop (Collatz steps) with continue and a break.
 */
export const divergentLoop = wave.kernel({ workgroup: [32] }, function divergentLoop(
  out: Uint32Array, steps: Uint32Array, n: u32, limit: u32
) {
  const i: u32 = wave.globalId();
  if (i >= n) {
    return;
  }
  let total: u32 = 0;
  for (let k: u32 = 0; k < i % 23 + 1; k++) {
    if (k % 3 === 2) {
      continue;
    }
    if (total > limit) {
      break;
    }
    if ((k & 4) !== 0) {
      for (let j: u32 = 0; j < k; j++) {
        if (j === i % 5) {
          break;
        }
        total += j;
      }
      continue;
    }
    total += k * k;
  }
  out[i] = total;

  let x: u32 = i + 1;
  let count: u32 = 0;
  let odd: u32 = 0;
  while (x !== 1) {
    count += 1;
    if (count > 60) {
      break;
    }
    if (x % 2 === 0) {
      x = x >>> 1;
      continue;
    }
    odd += 1;
    x = 3 * x + 1;
  }
  steps[2 * i] = count;
  steps[2 * i + 1] = odd * 1000 + x;
});
