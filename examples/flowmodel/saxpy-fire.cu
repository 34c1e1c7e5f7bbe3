// y = 3·x + y0 as a kernel actor: the threads of a firing share its 16 tokens.
void FIRE() {
  TOKEN_X_t *x = CAPTURE(PORT_x);
  TOKEN_Y0_t *y0 = CAPTURE(PORT_y0);
  TOKEN_Y_t *y = RESERVE(PORT_y, 0);
  for (int i = threadIdx.x; i < TOKEN_Y_RATE; i += blockDim.x)
    y[i] = 3.0f * x[i] + y0[i];
}
