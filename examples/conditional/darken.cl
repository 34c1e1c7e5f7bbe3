// darken.cl: y = x² on each pixel of a 4096-pixel frame (the bright
// frames' filter of kernel.yaml), one frame per work-group; each
// work-item computes blocks of BLOCK_Y_SIZE pixels. The same source is
// compiled as CUDA C (darken.cu includes the common actor API).
void FIRE() {
	TOKEN_X_t *x = CAPTURE(PORT_x);
	FOREACH(blk IN PORT_y) {
		TOKEN_Y_t *y = RESERVE(PORT_y, blk);
		for (int j = 0; j < BLOCK_Y_SIZE; j++) {
			float v = x[blk * BLOCK_Y_SIZE + j];
			y[j] = v * v;
		}
	}
}
