// fft2d.cl: the 2-D FFT of one tile per firing (OpenCL C), the stitch.fft
// actor's kernel; Transform in fft2d.go computes the same. Square tiles of
// N×N 16-bit pixels, N a power of two read from the port's rate (N² pixels),
// up to 4096. One firing is one work-group (of at most 1024 work-items):
//
//   1. the tile's mean (a reduction in local memory) is subtracted, and
//      each row is written to the output in bit-reversed order;
//   2. the rows' radix-2 stages, every butterfly of the tile spread over
//      the work-items, a barrier between stages;
//   3. the rows are put in bit-reversed order (swaps), and the columns'
//      stages run on whole rows;
//   4. the DC term is set to 0 (it is the sum of the tile minus its mean)
//      and the transform is copied to the delayed outputs fw and fn.
//
// The work-group's barriers order its global-memory accesses; nothing is
// shared between firings.

static uint rev_bits(uint v, int bits) {
	uint r = 0;
	for (int b = 0; b < bits; b++) {
		r = (r << 1) | (v & 1u);
		v >>= 1;
	}
	return r;
}

// stage runs one radix-2 stage of size len over the rows (rows = 0:
// along x, the elements of a row; rows = 1: along y, whole rows).
static void stage(__global float2 *f, int n, int lg, int len, int along_y) {
	int lid = get_local_id(0), lsz = get_local_size(0);
	int hlen = len >> 1;
	int total = (n * n) >> 1; // butterflies in the tile
	for (int t = lid; t < total; t += lsz) {
		// the line (row for the x pass, column for the y pass) and the
		// butterfly within it; in the y pass neighbouring work-items take
		// neighbouring columns, so their accesses are contiguous
		int line, k;
		if (along_y) {
			line = t & (n - 1);
			k = t >> lg;
		} else {
			line = t >> (lg - 1);
			k = t & ((n >> 1) - 1);
		}
		int grp = k / hlen, pos = k - grp * hlen;
		int i = grp * len + pos, j = i + hlen;
		float c = cospi(2.0f * (float)pos / (float)len);
		float s = -sinpi(2.0f * (float)pos / (float)len);
		int ia, ib;
		if (along_y) {
			ia = i * n + line;
			ib = j * n + line;
		} else {
			ia = line * n + i;
			ib = line * n + j;
		}
		float2 u = f[ia], v = f[ib];
		float2 vw = (float2)(v.x * c - v.y * s, v.x * s + v.y * c);
		f[ia] = u + vw;
		f[ib] = u - vw;
	}
	barrier(CLK_GLOBAL_MEM_FENCE);
}

void FIRE() {
	__local float part[1024];
	TOKEN_TILE_t *tile = CAPTURE(PORT_tile);
	TOKEN_F_t *f = RESERVE(PORT_f, 0);
	TOKEN_FW_t *fw = RESERVE(PORT_fw, 0);
	TOKEN_FN_t *fn = RESERVE(PORT_fn, 0);
	int lid = get_local_id(0), lsz = get_local_size(0);
	int npix = TOKEN_TILE_RATE;
	int lg = (31 - clz(npix)) / 2;
	int n = 1 << lg;

	float acc = 0.0f;
	for (int i = lid; i < npix; i += lsz) acc += (float)tile[i];
	part[lid] = acc;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int s = 1; s < lsz; s <<= 1) {
		if ((lid & (2 * s - 1)) == 0 && lid + s < lsz) part[lid] += part[lid + s];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	float mean = part[0] / (float)npix;

	for (int i = lid; i < npix; i += lsz) {
		int y = i >> lg, x = i & (n - 1);
		f[y * n + (int)rev_bits((uint)x, lg)] = (float2)((float)tile[i] - mean, 0.0f);
	}
	barrier(CLK_GLOBAL_MEM_FENCE);
	for (int len = 2; len <= n; len <<= 1) stage(f, n, lg, len, 0);

	for (int i = lid; i < npix; i += lsz) {
		int y = i >> lg, x = i & (n - 1);
		int r = (int)rev_bits((uint)y, lg);
		if (y < r) {
			float2 t = f[y * n + x];
			f[y * n + x] = f[r * n + x];
			f[r * n + x] = t;
		}
	}
	barrier(CLK_GLOBAL_MEM_FENCE);
	for (int len = 2; len <= n; len <<= 1) stage(f, n, lg, len, 1);

	if (lid == 0) f[0] = (float2)(0.0f, 0.0f);
	barrier(CLK_GLOBAL_MEM_FENCE);
	for (int i = lid; i < npix; i += lsz) {
		float2 v = f[i];
		fw[i] = v;
		fn[i] = v;
	}
}
