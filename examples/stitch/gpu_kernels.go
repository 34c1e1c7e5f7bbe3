package stitch

// gpuKernels is the CUDA C of the GPU engine (gpu.go), compiled with NVRTC
// on first use. Spectra are cuFFT's R2C layout: h rows of w/2+1 complex
// values (the Hermitian half of a w×h transform).
const gpuKernels = `
#define KMAX 16
#define PEAK_THREADS 256

// to_real: the tile's u16 pixels as floats (the R2C transform's input).
extern "C" __global__ void to_real(const unsigned short* t, float* r, int n) {
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		r[i] = (float)t[i];
}

// borders: block b < w writes T(b), the DFT at b of bottom row − top row;
// block w + v writes L(v), the DFT at v of right column − left column
// (Moisan's periodic-plus-smooth decomposition, pciam.go's borders).
extern "C" __global__ void borders(const unsigned short* t, int w, int h, float2* tl) {
	int b = blockIdx.x;
	int isT = b < w;
	int k = isT ? b : b - w;
	int n = isT ? w : h;
	float sr = 0, si = 0;
	for (int x = threadIdx.x; x < n; x += blockDim.x) {
		float d = isT ? (float)t[(h - 1) * w + x] - (float)t[x]
		              : (float)t[x * w + w - 1] - (float)t[x * w];
		int ph = (int)(((long long)k * x) % n); // the phase, reduced exactly
		float s, c;
		sincospif(-2.0f * (float)ph / (float)n, &s, &c);
		sr += d * c;
		si += d * s;
	}
	__shared__ float rs[256], is[256];
	rs[threadIdx.x] = sr;
	is[threadIdx.x] = si;
	__syncthreads();
	for (int o = blockDim.x / 2; o > 0; o >>= 1) {
		if (threadIdx.x < o) {
			rs[threadIdx.x] += rs[threadIdx.x + o];
			is[threadIdx.x] += is[threadIdx.x + o];
		}
		__syncthreads();
	}
	if (threadIdx.x == 0) tl[b] = make_float2(rs[0], is[0]);
}

// phase: in place on a tile's half spectrum, removes the smooth component
// S(u, v) = (T(u)·(1 − e^{2πiv/h}) + L(v)·(1 − e^{2πiu/w})) / (2cos(2πu/w) + 2cos(2πv/h) − 4)
// and keeps the phase alone (P/|P|; 0 where |P|² < 1e-30 and at (0, 0),
// the tile's mean). The pair's normalised cross-power spectrum is then
// the product of two of these.
extern "C" __global__ void phase(float2* s, const float2* tl, int w, int h) {
	int cols = w / 2 + 1;
	int n = cols * h;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		int u = i % cols, v = i / cols;
		if (i == 0) { s[0] = make_float2(0, 0); continue; }
		float2 p = s[i];
		float su, cu, sv, cv;
		sincospif(2.0f * (float)u / (float)w, &su, &cu);
		sincospif(2.0f * (float)v / (float)h, &sv, &cv);
		float d = 2 * cu + 2 * cv - 4;
		if (d != 0) {
			float r = 1 / d;
			float2 T = tl[u], L = tl[w + v];
			float2 ev = make_float2(1 - cv, -sv), eu = make_float2(1 - cu, -su);
			float sr = T.x * ev.x - T.y * ev.y + L.x * eu.x - L.y * eu.y;
			float si = T.x * ev.y + T.y * ev.x + L.x * eu.y + L.y * eu.x;
			p.x -= sr * r;
			p.y -= si * r;
		}
		float m2 = p.x * p.x + p.y * p.y;
		if (m2 < 1e-30f) { s[i] = make_float2(0, 0); continue; }
		float k = rsqrtf(m2);
		s[i] = make_float2(p.x * k, p.y * k);
	}
}

// cross: q = a·conj(b), the normalised cross-power spectrum of two
// phase-only half spectra; its inverse transform peaks at b's
// translation from a.
extern "C" __global__ void cross(const float2* a, const float2* b, float2* q, int n) {
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		float2 x = a[i], y = b[i];
		q[i] = make_float2(x.x * y.x + x.y * y.y, x.y * y.x - x.x * y.y);
	}
}

// better: value x at index i ranks before value y at index j (larger
// first; on a tie the smaller index, as pciam.go's Peaks).
__device__ __forceinline__ int better(float x, int i, float y, int j) {
	return x > y || (x == y && i < j);
}

__device__ void insert(float* v, int* ix, int k, float x, int i) {
	if (!better(x, i, v[k - 1], ix[k - 1])) return;
	int j = k - 1;
	while (j > 0 && better(x, i, v[j - 1], ix[j - 1])) {
		v[j] = v[j - 1];
		ix[j] = ix[j - 1];
		j--;
	}
	v[j] = x;
	ix[j] = i;
}

// peaks: the k (≤ KMAX) best of n values, per block, into ov/oi at
// blockIdx.x·k. With pi null a value's index is its position, else pi's
// entry (a second pass over the first one's candidates). Blocks of
// PEAK_THREADS threads.
extern "C" __global__ void peaks(const float* p, const int* pi, int n, int k, float* ov, int* oi) {
	float v[KMAX];
	int ix[KMAX];
	for (int j = 0; j < k; j++) { v[j] = __int_as_float(0xff800000); /* −∞ */ ix[j] = 0x7fffffff; }
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		insert(v, ix, k, p[i], pi ? pi[i] : i);
	__shared__ float sv[PEAK_THREADS * KMAX];
	__shared__ int si[PEAK_THREADS * KMAX];
	for (int j = 0; j < k; j++) {
		sv[threadIdx.x * k + j] = v[j];
		si[threadIdx.x * k + j] = ix[j];
	}
	__syncthreads();
	if (threadIdx.x != 0) return;
	for (int t = 1; t < blockDim.x; t++)
		for (int j = 0; j < k; j++) {
			float x = sv[t * k + j];
			int i = si[t * k + j];
			if (!better(x, i, v[k - 1], ix[k - 1])) break; // each list is sorted
			insert(v, ix, k, x, i);
		}
	for (int j = 0; j < k; j++) {
		ov[blockIdx.x * k + j] = v[j];
		oi[blockIdx.x * k + j] = ix[j];
	}
}

// ncc: the exact integer sums of the normalised cross-correlation of
// tiles a and b over their overlap, for each of the 4·k translations the
// k peaks stand for (blockIdx.y = 4·peak + 2·(dx is px − w) + (dy is
// py − h), pciam.go's order): Σa, Σb, Σa², Σb², Σab into sums[5·q], which
// the caller zeroes. An overlap thinner than 4 pixels is skipped (the host
// scores it −1).
extern "C" __global__ void ncc(const unsigned short* a, const unsigned short* b, int w, int h, const int* pk, unsigned long long* sums) {
	int q = blockIdx.y;
	int p = pk[q / 4];
	int px = p % w, py = p / w;
	int dx = (q & 2) ? px - w : px;
	int dy = (q & 1) ? py - h : py;
	int x0 = max(0, dx), x1 = min(w, w + dx);
	int y0 = max(0, dy), y1 = min(h, h + dy);
	if (x1 - x0 < 4 || y1 - y0 < 4) return;
	int ow = x1 - x0;
	int n = ow * (y1 - y0);
	unsigned long long s[5] = {0, 0, 0, 0, 0};
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		int y = y0 + i / ow, x = x0 + i % ow;
		unsigned long long u = a[y * w + x], v = b[(y - dy) * w + x - dx];
		s[0] += u;
		s[1] += v;
		s[2] += u * u;
		s[3] += v * v;
		s[4] += u * v;
	}
	for (int j = 0; j < 5; j++) {
		unsigned long long x = s[j];
		for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffu, x, o);
		if ((threadIdx.x & 31) == 0 && x) atomicAdd(&sums[5 * q + j], x);
	}
}
`
