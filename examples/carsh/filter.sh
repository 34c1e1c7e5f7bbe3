# 2-D FFT low-pass filter of a 512 x 512 f32 image (seed §3.6, Fig. 10) over
# virtual buffers resident on the device. Run from this directory:
#   go run ./gen                 # writes image.bin
#   sluice sh filter.sh          # writes filtered.bin
virtbuf create img f32 262144
virtbuf create a c64 262144
virtbuf create b c64 262144
virtbuf fill img image.bin
tocomplex.yaml
forward.yaml            # rows
forward.yaml            # columns
lowpass.yaml
virtbuf swap a b
inverse.yaml            # rows
inverse.yaml            # columns
magnitude.yaml
virtbuf dump img filtered.bin
virtbuf delete --all
