package flowmodel

// Every backend built into sluice, so that Local sees every device.
import _ "github.com/sluicehq/sluice/device/all"
