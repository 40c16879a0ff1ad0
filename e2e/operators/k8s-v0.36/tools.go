//go:build tools

// Package operators pins the job kinds' controllers e2e/operators/build.sh builds.
package operators

import (
	_ "sigs.k8s.io/jobset"
	_ "sigs.k8s.io/lws/cmd"
	_ "github.com/kubeflow/training-operator/cmd/training-operator.v1"
	_ "github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager"
)
