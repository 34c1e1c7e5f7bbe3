// darken.cu: y = x² on each pixel of a 4096-pixel frame, the CUDA version
// of darken.cl (the actor API is common to both backends).
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
