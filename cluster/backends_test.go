package cluster

// The tests see every device backend built in, as the sluice binary does
// (only main packages and tests import device/all).
import _ "github.com/sluicehq/sluice/device/all"
