// k-means colour quantization (Caravela PEA-ST example): the kernels of
// examples/kmeans-quantize.yaml. Arguments follow the actor's ports in
// declaration order (inputs, then outputs); one firing runs as one NDRange.
//
//   N  pixels per frame (512 x 512), K  palette size, P  partial-sum groups.
#define N 262144
#define K 16
#define P 64

// unpack: RGBA8 pixels to float4, one pixel per work-item.
__kernel void unpack(__global const uchar4 *rgba, __global float4 *px) {
  size_t i = get_global_id(0);
  if (i < N) px[i] = convert_float4(rgba[i]);
}

// init_centers (InitCenterCluster): in phase 0 of each frame, seed the K
// centres with pixels taken at a hashed stride; in phases 1..3 pass the
// centres computed by set_new_center through. `prev` carries the loop
// tokens (the previous frame's palette in phase 0).
__kernel void init_centers(__global const float4 *px, __global const float4 *prev,
                           __global float4 *centers, const int phase) {
  int k = get_global_id(0);
  if (k >= K) return;
  if (phase == 0) {
    uint h = (uint)k * 2654435761u;           // Knuth multiplicative hash
    uint i = (h ^ (h >> 16)) % N;
    float4 seed = px[i];
    // keep the previous palette's colour when the seed is nearly the same,
    // so a static scene converges across frames
    centers[k] = distance(seed.xyz, prev[k].xyz) < 8.0f ? prev[k] : seed;
  } else {
    centers[k] = prev[k];
  }
}

// set_group (SetGroup): assign each pixel to its nearest centre and reduce
// per work-group the sums (r, g, b, count) of each cluster. The frame is kept
// on the device (the actor is stateful) and read in phase 0 only.
__kernel void set_group(__global const float4 *px, __global const float4 *centers,
                        __global float4 *sums, __local float4 *acc /* K per group */) {
  int lid = get_local_id(0), gid = get_group_id(0);
  int lsz = get_local_size(0);
  for (int k = lid; k < K; k += lsz) acc[k] = (float4)(0.0f);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = get_global_id(0); i < N; i += get_global_size(0)) {
    float4 p = px[i];
    int best = 0;
    float bd = INFINITY;
    for (int k = 0; k < K; k++) {
      float3 d = p.xyz - centers[k].xyz;
      float dd = dot(d, d);
      if (dd < bd) { bd = dd; best = k; }
    }
    // local float atomics are not portable: accumulate with a lock-free
    // compare-and-swap on the bit pattern
    for (int c = 0; c < 4; c++) {
      volatile __local int *slot = (volatile __local int *)&acc[best] + c;
      float add = c < 3 ? ((float *)&p)[c] : 1.0f;
      int old, upd;
      do {
        old = *slot;
        upd = as_int(as_float(old) + add);
      } while (atomic_cmpxchg(slot, old, upd) != old);
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = lid; k < K; k += lsz) sums[gid * K + k] = acc[k];
}

// set_new_center (SetNewCenter): reduce the P partial sums of each cluster
// to its new centre (an empty cluster keeps a black centre).
__kernel void set_new_center(__global const float4 *sums, __global float4 *next,
                             __global float4 *palette, const int phase) {
  int k = get_global_id(0);
  if (k >= K) return;
  float4 s = (float4)(0.0f);
  for (int g = 0; g < P; g++) s += sums[g * K + k];
  float4 c = s.w > 0.0f ? (float4)(s.xyz / s.w, 0.0f) : (float4)(0.0f);
  next[k] = c;
  if (phase == 3) palette[k] = c;              // the palette leaves after the last iteration
}

// change_color (ChangeColor): replace each pixel by its nearest palette colour.
__kernel void change_color(__global const float4 *px, __global const float4 *palette,
                           __global uchar4 *rgba) {
  size_t i = get_global_id(0);
  if (i >= N) return;
  float4 p = px[i];
  int best = 0;
  float bd = INFINITY;
  for (int k = 0; k < K; k++) {
    float3 d = p.xyz - palette[k].xyz;
    float dd = dot(d, d);
    if (dd < bd) { bd = dd; best = k; }
  }
  rgba[i] = (uchar4)(convert_uchar3_sat_rte(palette[best].xyz), (uchar)p.w);
}
