// blur.cl: 5×5 binomial Gaussian blur of one 320×240 u8 frame per firing
// (OpenCL C; blur.cu is the same in CUDA C). Weights [1 4 6 4 1] ⊗
// [1 4 6 4 1] (sum 256), rounded, edges clamped: the integers of Blur in
// filters.go. The blurred frame goes to y (for sobel), c (flow's current
// frame) and d (the channel that delays it by one frame: flow's previous
// frame). Blocks are single pixels, dealt to the work-items by the mapping.
#define IMG_W 320
#define IMG_H 240

void FIRE() {
	TOKEN_X_t *x = CAPTURE(PORT_x);
	FOREACH(i IN PORT_y) {
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
		TOKEN_Y_t v = (TOKEN_Y_t)((s + 128) >> 8);
		TOKEN_Y_t *y = RESERVE(PORT_y, i);
		TOKEN_C_t *c = RESERVE(PORT_c, i);
		TOKEN_D_t *d = RESERVE(PORT_d, i);
		y[0] = v;
		c[0] = v;
		d[0] = v;
	}
}
