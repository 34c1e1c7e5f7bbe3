// flow.cu: Lucas–Kanade optical flow of one 320×240 frame per firing
// (CUDA C; flow.cl is the same in OpenCL C) — Flow and Solve in
// filters.go. For each pixel, over the 7×7 window around it (edges
// clamped), the sums a = Σgx², b = Σgx·gy, c = Σgy², p = Σgx·It,
// q = Σgy·It of the Sobel gradients gx, gy of this frame and It = cur −
// prev (the blurred frames); then, where the smaller eigenvalue of
// [a b; b c] is at least MIN_EIGEN (an exact integer test), the flow
// (u, v) = −8·[a b; b c]⁻¹·[p q] in pixels per frame, else NaN. The sums
// are exact integers, so only the final float division can differ from
// the Go version.
#define IMG_W 320
#define IMG_H 240
#define RADIUS 3
#define MIN_EIGEN (49 * 64 * 2)

void FIRE() {
	TOKEN_GX_t *gx = CAPTURE(PORT_gx);
	TOKEN_GY_t *gy = CAPTURE(PORT_gy);
	TOKEN_CUR_t *cur = CAPTURE(PORT_cur);
	TOKEN_PREV_t *prev = CAPTURE(PORT_prev);
	FOREACH(i IN PORT_f) {
		int px = i % IMG_W, py = i / IMG_W;
		int a = 0, b = 0, c = 0, p = 0, q = 0;
		for (int dy = -RADIUS; dy <= RADIUS; dy++) {
			int row = min(max(py + dy, 0), IMG_H - 1) * IMG_W;
			for (int dx = -RADIUS; dx <= RADIUS; dx++) {
				int k = row + min(max(px + dx, 0), IMG_W - 1);
				int ix = gx[k], iy = gy[k];
				int it = (int)cur[k] - (int)prev[k];
				a += ix * ix;
				b += ix * iy;
				c += iy * iy;
				p += ix * it;
				q += iy * it;
			}
		}
		long long la = a, lb = b, lc = c, lp = p, lq = q;
		long long t = la + lc - 2 * MIN_EIGEN;
		float u = __int_as_float(0x7fc00000), v = __int_as_float(0x7fc00000);
		if (t >= 0 && t * t >= (la - lc) * (la - lc) + 4 * lb * lb) {
			long long det = la * lc - lb * lb;
			u = (float)(-8 * (lc * lp - lb * lq)) / (float)det;
			v = (float)(-8 * (la * lq - lb * lp)) / (float)det;
		}
		TOKEN_F_t *f = RESERVE(PORT_f, i);
		f[0].x = u;
		f[0].y = v;
	}
}
