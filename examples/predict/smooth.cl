// smooth.cl: y = x / 2, exact in float32 as the built-in scale (examples/predict/mixed.yaml), one firing per
// work-group; each work-item computes blocks of BLOCK_Y_SIZE tokens.
void FIRE() {
	TOKEN_X_t *x = CAPTURE(PORT_x);
	FOREACH(blk IN PORT_y) {
		TOKEN_Y_t *y = RESERVE(PORT_y, blk);
		for (int j = 0; j < BLOCK_Y_SIZE; j++) {
			int i = blk * BLOCK_Y_SIZE + j;
			y[j] = 0.5f * x[i];
		}
	}
}
