// sobel.cu: the 3×3 Sobel gradients of one 320×240 u8 frame per firing
// (CUDA C; sobel.cl is the same in OpenCL C): gx (left to right) and gy
// (top to bottom), i16, edges clamped — Sobel in filters.go.
#define IMG_W 320
#define IMG_H 240

void FIRE() {
	TOKEN_X_t *x = CAPTURE(PORT_x);
	FOREACH(i IN PORT_gx) {
		int px = i % IMG_W, py = i / IMG_W;
		int xm = max(px - 1, 0), xp = min(px + 1, IMG_W - 1);
		int ra = max(py - 1, 0) * IMG_W, rb = py * IMG_W, rc = min(py + 1, IMG_H - 1) * IMG_W;
		int a00 = x[ra + xm], a01 = x[ra + px], a02 = x[ra + xp];
		int a10 = x[rb + xm], a12 = x[rb + xp];
		int a20 = x[rc + xm], a21 = x[rc + px], a22 = x[rc + xp];
		TOKEN_GX_t *gx = RESERVE(PORT_gx, i);
		TOKEN_GY_t *gy = RESERVE(PORT_gy, i);
		gx[0] = (TOKEN_GX_t)((a02 + 2 * a12 + a22) - (a00 + 2 * a10 + a20));
		gy[0] = (TOKEN_GY_t)((a20 + 2 * a21 + a22) - (a00 + 2 * a01 + a02));
	}
}
