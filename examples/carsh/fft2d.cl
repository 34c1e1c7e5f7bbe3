// 2-D FFT filter kernels for sluice sh (examples/carsh): the kernels of
// examples/kernels/fft.cl and filter.cl over a whole W x W image per launch
// (one work-group per row) instead of one row per firing, with the same
// arithmetic, so that the shell and the graph compute the same image.
#define W 512
#define LOG2W 9

__kernel void to_complex(__global const float *img, __global float2 *z) {
  int i = get_global_id(0);
  z[i] = (float2)(img[i], 0.0f);
}

// bit_reverse ("reorder") of every row.
__kernel void bit_reverse(__global const float2 *x, __global float2 *y) {
  uint g = get_global_id(0);
  uint row = g / W, i = g % W;
  uint r = 0, v = i;
  for (int b = 0; b < LOG2W; b++) { r = (r << 1) | (v & 1u); v >>= 1; }
  y[row * W + r] = x[row * W + i];
}

// radix-2 decimation-in-time FFT of one row in local memory.
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

// fft_rows: one work-group per row.
__kernel void fft_rows(__global const float2 *x, __global float2 *y, __local float2 *s) {
  size_t off = get_group_id(0) * W;
  fft_stages(x + off, y + off, s, -1.0f);
}

__kernel void ifft_rows(__global const float2 *x, __global float2 *y, __local float2 *s) {
  size_t off = get_group_id(0) * W;
  fft_stages(x + off, y + off, s, 1.0f);
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (int i = get_local_id(0); i < W; i += get_local_size(0)) y[off + i] /= (float)W;
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

#define CUTOFF 0.15f

static float radius(int row, int col) {
  float fy = (float)min(row, W - row) / (W / 2);
  float fx = (float)min(col, W - col) / (W / 2);
  return sqrt(fx * fx + fy * fy);
}

// lowpass: Gaussian low pass of the spectrum.
__kernel void lowpass(__global const float2 *x, __global float2 *y) {
  int g = get_global_id(0);
  int row = g / W, col = g % W;
  float r = radius(row, col) / CUTOFF;
  y[g] = x[g] * exp(-0.5f * r * r);
}

// magnitude: complex image back to a real one.
__kernel void magnitude(__global const float2 *z, __global float *img) {
  int i = get_global_id(0);
  img[i] = length(z[i]);
}
