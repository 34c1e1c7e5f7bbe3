// blur.cl: 5×5 binomial Gaussian blur of one 320×240 u8 frame per firing
// (OpenCL C; blur.cu is the same). Weights [1 4 6 4 1] ⊗ [1 4 6 4 1] (sum
// 256), rounded, edges clamped: the arithmetic of Blur in imagepipe.go and
// of the reference program. Blocks are single pixels, dealt to the
// work-items by the mapping (strided: neighbouring work-items, neighbouring
// pixels).
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
		TOKEN_Y_t *y = RESERVE(PORT_y, i);
		y[0] = (TOKEN_Y_t)((s + 128) >> 8);
	}
}
