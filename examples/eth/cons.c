// cons: consumes two 1-byte tokens per firing and folds them into a checksum.
static unsigned checksum;

void INIT() { checksum = 0; }

void FIRE() {
  TOKEN_IN1_t *rbuf = CAPTURE(PORT_in1);
  const unsigned char *b = (const unsigned char *)rbuf;
  checksum = checksum * 31u + b[0] * 257u + b[1];
}
