//go:build tools

// Package operators pins the job kinds' controllers e2e/operators/build.sh builds.
package operators

import (
	_ "github.com/kubeflow/mpi-operator/cmd/mpi-operator"
	_ "github.com/project-codeflare/appwrapper/cmd"
)
