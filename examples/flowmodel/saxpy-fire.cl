// y = 3·x + y0 as a kernel actor: the work-items of a firing share its 16 tokens.
void FIRE() {
  TOKEN_X_t *x = CAPTURE(PORT_x);
  TOKEN_Y0_t *y0 = CAPTURE(PORT_y0);
  TOKEN_Y_t *y = RESERVE(PORT_y, 0);
  for (int i = get_local_id(0); i < TOKEN_Y_RATE; i += get_local_size(0))
    y[i] = 3.0f * x[i] + y0[i];
}
