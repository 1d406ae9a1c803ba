import * as wave from "wave";
import type { u32 } from "wave";

/**
 * dst (width rows of height) = the transpose of src (height rows of width), through a
 * 16x16 tile in Local Memory padded to 17 columns, with a barrier between the load and the
 * transposed store. The edge tiles are partial.
 */
export const transpose = wave.kernel({ workgroup: [16, 16] }, function transpose(
  src: Float32Array, dst: Float32Array, width: u32, height: u32
) {
  const tile = wave.localArray(Float32Array, 272);
  const tx: u32 = wave.threadId(0);
  const ty: u32 = wave.threadId(1);
  const x: u32 = wave.workgroupId(0) * 16 + tx;
  const y: u32 = wave.workgroupId(1) * 16 + ty;
  if (x < width && y < height) {
    tile[ty * 17 + tx] = src[y * width + x];
  }
  wave.barrier();
  const ox: u32 = wave.workgroupId(1) * 16 + tx;
  const oy: u32 = wave.workgroupId(0) * 16 + ty;
  if (ox < height && oy < width) {
    dst[oy * height + ox] = tile[tx * 17 + ty];
  }
});
