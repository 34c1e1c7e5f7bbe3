// Frequency-domain filter of examples/fft-filter.yaml: one firing is one row
// (index `row`, 0..W-1, passed by the runtime) of the W x W spectrum.
#define W 512
#define CUTOFF 0.15f   // fraction of the Nyquist frequency kept by the low pass

static float radius(int row, int col) {
  // frequencies wrap: bin k and bin W-k are the same distance from DC
  float fy = (float)min(row, W - row) / (W / 2);
  float fx = (float)min(col, W - col) / (W / 2);
  return sqrt(fx * fx + fy * fy);
}

// lowpass: Gaussian low pass (smooths the image).
__kernel void lowpass(__global const float2 *x, __global float2 *y, const int row) {
  int col = get_global_id(0);
  if (col >= W) return;
  float r = radius(row, col) / CUTOFF;
  y[col] = x[col] * exp(-0.5f * r * r);
}

// highpass: its complement (keeps edges).
__kernel void highpass(__global const float2 *x, __global float2 *y, const int row) {
  int col = get_global_id(0);
  if (col >= W) return;
  float r = radius(row, col) / CUTOFF;
  y[col] = x[col] * (1.0f - exp(-0.5f * r * r));
}
