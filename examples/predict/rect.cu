// rect.cu: y = 1 where x ≥ 0, else 0, as the built-in threshold (examples/predict/mixed.yaml), one firing per
// thread block; each thread computes blocks of BLOCK_Y_SIZE tokens.
void FIRE() {
	TOKEN_X_t *x = CAPTURE(PORT_x);
	FOREACH(blk IN PORT_y) {
		TOKEN_Y_t *y = RESERVE(PORT_y, blk);
		for (int j = 0; j < BLOCK_Y_SIZE; j++) {
			int i = blk * BLOCK_Y_SIZE + j;
			y[j] = x[i] >= 0.0f ? 1.0f : 0.0f;
		}
	}
}
