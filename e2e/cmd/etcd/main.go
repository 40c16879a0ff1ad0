// Command etcd is the upstream etcd server, built from the version pinned in go.mod so that the
// local control plane needs no prebuilt binary.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
