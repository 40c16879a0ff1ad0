//go:build tools

// Package operators pins the job kinds' controllers e2e/operators/build.sh builds.
package operators

import (
	_ "github.com/ray-project/kuberay/ray-operator"
)
