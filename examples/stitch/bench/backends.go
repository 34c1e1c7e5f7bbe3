package main

// Every device backend built in: kernel actors run on OpenCL and CUDA
// devices (only main packages import device/all).
import _ "github.com/sluicehq/sluice/device/all"
