module kuota.local/e2e-crds

go 1.26.0

// The cluster autoscaler's API module, for its ProvisioningRequest CRD, at the version Kueue's
// go.mod pins.
require k8s.io/autoscaler/cluster-autoscaler/apis v0.0.0-20240830133931-adfbe7e45277
