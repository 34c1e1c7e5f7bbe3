// 2-D FFT filtering (Caravela CarSh example): the row kernels of
// examples/fft-filter.yaml and examples/fft-pass.yaml. Arguments follow the
// actor's ports in declaration order; one firing handles one row of W
// complex samples (float2: re, im) as one work-group, except transpose,
// which handles the whole W x W image.
#define W 512
#define LOG2W 9

__kernel void to_complex(__global const float *row, __global float2 *z) {
  int i = get_global_id(0);
  if (i < W) z[i] = (float2)(row[i], 0.0f);
}

// bit_reverse ("reorder"): the butterfly exchange that puts a row in
// bit-reversed order before the in-place radix-2 stages.
__kernel void bit_reverse(__global const float2 *x, __global float2 *y) {
  uint i = get_global_id(0);
  if (i >= W) return;
  uint r = 0, v = i;
  for (int b = 0; b < LOG2W; b++) { r = (r << 1) | (v & 1u); v >>= 1; }
  y[r] = x[i];
}

// radix-2 decimation-in-time FFT of one row in local memory; the log2(W)
// butterfly stages are the iterations Caravela ran by swapping buffers.
static void fft_stages(__global const float2 *x, __global float2 *y,
                       __local float2 *s, float sign) {
  int lid = get_local_id(0), lsz = get_local_size(0);
  for (int i = lid; i < W; i += lsz) s[i] = x[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int len = 2; len <= W; len <<= 1) {
    int hlen = len >> 1;
    for (int t = lid; t < W / 2; t += lsz) {
      int grp = t / hlen, pos = t % hlen;
      int a = grp * len + pos, b = a + hlen;
      float ang = sign * 2.0f * M_PI_F * (float)pos / (float)len;
      float2 w = (float2)(cos(ang), sin(ang));
      float2 u = s[a], v = s[b];
      float2 vw = (float2)(v.x * w.x - v.y * w.y, v.x * w.y + v.y * w.x);
      s[a] = u + vw;
      s[b] = u - vw;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int i = lid; i < W; i += lsz) y[i] = s[i];
}

__kernel void fft_row(__global const float2 *x, __global float2 *y, __local float2 *s) {
  fft_stages(x, y, s, -1.0f);
}

__kernel void ifft_row(__global const float2 *x, __global float2 *y, __local float2 *s) {
  fft_stages(x, y, s, 1.0f);
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (int i = get_local_id(0); i < W; i += get_local_size(0)) y[i] /= (float)W;
}

// transpose: W x W complex image, 16 x 16 tiles through local memory.
__kernel void transpose(__global const float2 *x, __global float2 *y) {
  __local float2 tile[16][17];
  int gx = get_group_id(0) * 16, gy = get_group_id(1) * 16;
  int lx = get_local_id(0), ly = get_local_id(1);
  tile[ly][lx] = x[(gy + ly) * W + gx + lx];
  barrier(CLK_LOCAL_MEM_FENCE);
  y[(gx + ly) * W + gy + lx] = tile[lx][ly];
}

// magnitude: complex row back to a real image row.
__kernel void magnitude(__global const float2 *z, __global float *row) {
  int i = get_global_id(0);
  if (i < W) row[i] = length(z[i]);
}
