// motion.cl: frame differencing of Sobel magnitudes (OpenCL C; motion.cu
// is the same): the sum of |cur - prev| over the 3×3 neighbourhood,
// min(255, SAD >> 3), edges clamped. prev is the previous frame's
// magnitude (an all-zero frame before the first).
#define IMG_W 320
#define IMG_H 240

void FIRE() {
	TOKEN_CUR_t *cur = CAPTURE(PORT_cur);
	TOKEN_PREV_t *prev = CAPTURE(PORT_prev);
	FOREACH(i IN PORT_m) {
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
		TOKEN_M_t *m = RESERVE(PORT_m, i);
		m[0] = (TOKEN_M_t)min(s >> 3, 255);
	}
}
