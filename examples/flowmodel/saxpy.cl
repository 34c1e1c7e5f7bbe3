__kernel void saxpy(__global const float *x, __global const float *y0,
                    __global float *y, const float a, const int n) {
  int i = get_global_id(0);
  if (i < n) y[i] = a * x[i] + y0[i];
}
