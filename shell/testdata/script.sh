# Resident virtual buffers, an executable, a batch, dumps.
virtbuf create x f32 8
virtbuf create y0 f32 8
virtbuf create y f32 8
virtbuf fill x x.csv
virtbuf fill y0 ones.csv
RUN.yaml
virtbuf dump y y.csv
virtbuf dump y0 y0.csv
repeat 2 virtbuf swap y y0
virtbuf fill y0 ones.csv
batch.yaml
jobs
virtbuf delete --all
