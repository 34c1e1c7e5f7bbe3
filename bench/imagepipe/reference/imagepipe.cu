// imagepipe.cu: the hand-written CUDA C program that bench/imagepipe
// compares sluice with. Same kernels (same arithmetic as
// examples/imagepipe/{blur,sobel,motion}.cu and imagepipe.go), same
// frames (the 80 distinct frames of the synthetic scene, in pinned host
// memory), same data movement per frame (76800 bytes host → device, 76800
// bytes device → host), one stream, N frames timed with cudaEvents.
//
//   ./imagepipe [-frames N] [-batch B] [-threads T] [-layout grid|actor] [-warm W] [-check C]
//
// -batch B processes B frames per kernel launch and per copy (1: one frame
// at a time, the natural program). -layout grid spreads a frame over all
// SMs (one thread per pixel); -layout actor is sluice's kernel-actor shape
// (one thread block per frame, T threads striding over its pixels). It
// prints one JSON line: fps, the settings and the checksum of the first C
// motion frames (computed untimed, as bench/imagepipe's sink does).
//
// Built with nvcc by build.sh; without nvcc, reference.go compiles the
// kernels below with NVRTC and runs the same host loop on the driver API.

#define IMG_W 320
#define IMG_H 240
#define NPIX (IMG_W * IMG_H)
#define PERIOD 80

typedef unsigned char uchar;

__device__ __forceinline__ void span(int actor, int *f, int *i0, int *st) {
	if (actor) { *f = blockIdx.x; *i0 = threadIdx.x; *st = blockDim.x; }
	else { *f = blockIdx.y; *i0 = blockIdx.x * blockDim.x + threadIdx.x; *st = gridDim.x * blockDim.x; }
}

extern "C" __global__ void blur(const uchar *in, uchar *out, int actor) {
	int f, i0, st;
	span(actor, &f, &i0, &st);
	const uchar *x = in + (unsigned long long)f * NPIX;
	uchar *y = out + (unsigned long long)f * NPIX;
	for (int i = i0; i < NPIX; i += st) {
		int px = i % IMG_W, py = i / IMG_W;
		int s = 0;
		for (int dy = -2; dy <= 2; dy++) {
			int wy = dy == 0 ? 6 : (dy == 1 || dy == -1) ? 4 : 1;
			int row = min(max(py + dy, 0), IMG_H - 1) * IMG_W;
			int h = 0;
			for (int dx = -2; dx <= 2; dx++) {
				int wx = dx == 0 ? 6 : (dx == 1 || dx == -1) ? 4 : 1;
				h += wx * x[row + min(max(px + dx, 0), IMG_W - 1)];
			}
			s += wy * h;
		}
		y[i] = (uchar)((s + 128) >> 8);
	}
}

// sobel writes frame f of the launch to slot (s0 + f) mod R of the ring of
// magnitudes, so that motion finds the previous frame in the slot before.
extern "C" __global__ void sobel(const uchar *in, uchar *ring, int s0, int R, int actor) {
	int f, i0, st;
	span(actor, &f, &i0, &st);
	const uchar *x = in + (unsigned long long)f * NPIX;
	uchar *y = ring + (unsigned long long)((s0 + f) % R) * NPIX;
	for (int i = i0; i < NPIX; i += st) {
		int px = i % IMG_W, py = i / IMG_W;
		int xm = max(px - 1, 0), xp = min(px + 1, IMG_W - 1);
		int ra = max(py - 1, 0) * IMG_W, rb = py * IMG_W, rc = min(py + 1, IMG_H - 1) * IMG_W;
		int a00 = x[ra + xm], a01 = x[ra + px], a02 = x[ra + xp];
		int a10 = x[rb + xm], a12 = x[rb + xp];
		int a20 = x[rc + xm], a21 = x[rc + px], a22 = x[rc + xp];
		int gx = (a02 + 2 * a12 + a22) - (a00 + 2 * a10 + a20);
		int gy = (a20 + 2 * a21 + a22) - (a00 + 2 * a01 + a02);
		int s = gx * gx + gy * gy;
		int r = (int)sqrtf((float)s);
		while (r * r > s) r--;
		while ((r + 1) * (r + 1) <= s) r++;
		y[i] = (uchar)min(r >> 2, 255);
	}
}

extern "C" __global__ void motion(const uchar *ring, uchar *out, int s0, int R, int actor) {
	int f, i0, st;
	span(actor, &f, &i0, &st);
	const uchar *cur = ring + (unsigned long long)((s0 + f) % R) * NPIX;
	const uchar *prev = ring + (unsigned long long)((s0 + f + R - 1) % R) * NPIX;
	uchar *m = out + (unsigned long long)f * NPIX;
	for (int i = i0; i < NPIX; i += st) {
		int px = i % IMG_W, py = i / IMG_W;
		int s = 0;
		for (int dy = -1; dy <= 1; dy++) {
			int row = min(max(py + dy, 0), IMG_H - 1) * IMG_W;
			for (int dx = -1; dx <= 1; dx++) {
				int k = row + min(max(px + dx, 0), IMG_W - 1);
				int d = (int)cur[k] - (int)prev[k];
				s += d < 0 ? -d : d;
			}
		}
		m[i] = (uchar)min(s >> 3, 255);
	}
}

#ifndef __CUDACC_RTC__
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

// draw is Draw of examples/imagepipe/imagepipe.go.
static void draw(int t, uchar *dst) {
	int p = t % PERIOD;
	int tri = p < PERIOD / 2 ? p : PERIOD - p;
	int cx = 40 + 3 * p, cy = 80 + 2 * tri, sx = 270 - 3 * p, sy = 170;
	for (int y = 0; y < IMG_H; y++)
		for (int x = 0; x < IMG_W; x++) {
			int v = 40 + (((x >> 4) ^ (y >> 4)) & 1) * 50 + ((x + y) >> 4);
			int dx = x - cx, dy = y - cy;
			if (dx * dx + dy * dy <= 24 * 24) v = 230;
			else if (x >= sx && x < sx + 32 && y >= sy && y < sy + 32) v = 180;
			dst[y * IMG_W + x] = (uchar)v;
		}
}

struct Sum { long long frames; uint64_t sum, moving, hash; };

static void add(Sum *c, const uchar *m) {
	if (c->frames == 0) c->hash = 14695981039346656037ull;
	uint64_t fs = 0, mv = 0;
	for (int i = 0; i < NPIX; i++) { fs += m[i]; mv += m[i] >= 64; }
	c->frames++; c->sum += fs; c->moving += mv;
	c->hash = (c->hash ^ fs) * 1099511628211ull;
}

struct Pipe {
	int B, T, actor;
	uchar *table, *hout;          // pinned: PERIOD frames; B motion frames
	uchar *din, *dblur, *dring, *dout;
	cudaStream_t s;
	long long t;                  // next frame
	int k;                        // batches so far
};

static void batch(Pipe *p) {
	int B = p->B;
	// frames t .. t+B-1 of the table, copied in one or more pieces (wrap)
	for (int j = 0; j < B;) {
		int slot = (int)((p->t + j) % PERIOD);
		int n = B - j < PERIOD - slot ? B - j : PERIOD - slot;
		CK(cudaMemcpyAsync(p->din + (size_t)j * NPIX, p->table + (size_t)slot * NPIX, (size_t)n * NPIX, cudaMemcpyHostToDevice, p->s));
		j += n;
	}
	dim3 grid = p->actor ? dim3(B) : dim3((NPIX + p->T - 1) / p->T, B);
	int s0 = (p->k % 2) * B, R = 2 * B;
	blur<<<grid, p->T, 0, p->s>>>(p->din, p->dblur, p->actor);
	sobel<<<grid, p->T, 0, p->s>>>(p->dblur, p->dring, s0, R, p->actor);
	motion<<<grid, p->T, 0, p->s>>>(p->dring, p->dout, s0, R, p->actor);
	CK(cudaMemcpyAsync(p->hout, p->dout, (size_t)B * NPIX, cudaMemcpyDeviceToHost, p->s));
	p->t += B;
	p->k++;
}

static void reset(Pipe *p) {
	CK(cudaMemsetAsync(p->dring, 0, (size_t)2 * p->B * NPIX, p->s));
	p->t = 0;
	p->k = 0;
}

#ifndef IMAGEPIPE_NO_MAIN // streams.cu includes this file for its kernels and helpers
int main(int argc, char **argv) {
	long long frames = 20000, warm = -1, check = 400;
	int B = 1, T = 256, actor = 0;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-frames")) frames = atoll(argv[i + 1]);
		else if (!strcmp(argv[i], "-batch")) B = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-threads")) T = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-warm")) warm = atoll(argv[i + 1]);
		else if (!strcmp(argv[i], "-check")) check = atoll(argv[i + 1]);
		else if (!strcmp(argv[i], "-layout")) actor = !strcmp(argv[i + 1], "actor");
		else { fprintf(stderr, "unknown flag %s\n", argv[i]); return 2; }
	}
	if (warm < 0) warm = frames / 10;
	Pipe p = {};
	p.B = B; p.T = T; p.actor = actor;
	CK(cudaSetDevice(0));
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, 0));
	CK(cudaStreamCreateWithFlags(&p.s, cudaStreamNonBlocking));
	CK(cudaHostAlloc((void **)&p.table, (size_t)PERIOD * NPIX, cudaHostAllocPortable));
	CK(cudaHostAlloc((void **)&p.hout, (size_t)B * NPIX, cudaHostAllocPortable));
	for (int t = 0; t < PERIOD; t++) draw(t, p.table + (size_t)t * NPIX);
	CK(cudaMalloc((void **)&p.din, (size_t)B * NPIX));
	CK(cudaMalloc((void **)&p.dblur, (size_t)B * NPIX));
	CK(cudaMalloc((void **)&p.dring, (size_t)2 * B * NPIX));
	CK(cudaMalloc((void **)&p.dout, (size_t)B * NPIX));

	// checksum of the first `check` motion frames (untimed: waits per batch)
	Sum c = {};
	reset(&p);
	while (c.frames < check) {
		batch(&p);
		CK(cudaStreamSynchronize(p.s));
		for (int j = 0; j < B && c.frames < check; j++) add(&c, p.hout + (size_t)j * NPIX);
	}

	// timed: warm frames, then `frames` frames back to back
	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	reset(&p);
	for (long long n = 0; n < warm; n += B) batch(&p);
	CK(cudaEventRecord(e0, p.s));
	long long n = 0;
	for (; n < frames; n += B) batch(&p);
	CK(cudaEventRecord(e1, p.s));
	CK(cudaEventSynchronize(e1));
	float ms = 0;
	CK(cudaEventElapsedTime(&ms, e0, e1));
	CK(cudaGetLastError());
	printf("{\"builder\":\"nvcc\",\"device\":\"%s\",\"fps\":%.1f,\"frames\":%lld,\"batch\":%d,\"threads\":%d,\"layout\":\"%s\","
	       "\"checksum\":{\"frames\":%lld,\"sum\":%llu,\"moving\":%llu,\"hash\":%llu}}\n",
	       prop.name, n / (ms / 1e3), n, B, T, actor ? "actor" : "grid",
	       c.frames, (unsigned long long)c.sum, (unsigned long long)c.moving, (unsigned long long)c.hash);
	return 0;
}
#endif // IMAGEPIPE_NO_MAIN
#endif
