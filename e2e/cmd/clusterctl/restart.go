package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"syscall"
	"time"
)

// restart stops one running component of the control plane and starts it again with the flags
// `up` gave it, appending to its log: etcd keeps its data folder, so a restarted API server
// serves the same objects. --kill stops it with SIGKILL (a crash) instead of SIGTERM.
func restart(l layout, args []string) error {
	flags := flag.NewFlagSet("restart", flag.ContinueOnError)
	kill := flags.Bool("kill", false, "stop the component with SIGKILL instead of SIGTERM")
	down := flags.Duration("down", 0, "how long the component stays stopped before it starts again")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() != 1 || !slices.Contains(componentNames, flags.Arg(0)) {
		return fmt.Errorf("usage: e2e/cluster restart [--kill] [--down DURATION] COMPONENT (one of %v)", componentNames)
	}
	name := flags.Arg(0)
	var p ports
	if err := readJSON(l.ports(), &p); err != nil {
		return fmt.Errorf("no cluster state in %s: is the cluster up? %w", l.state, err)
	}
	rec, ok := readRecord(l, name)
	if !ok || !rec.alive() {
		return fmt.Errorf("%s is not running", name)
	}
	began := time.Now()
	if *kill {
		if err := syscall.Kill(rec.pid, syscall.SIGKILL); err != nil {
			return fmt.Errorf("kill %s (pid %d): %w", name, rec.pid, err)
		}
		for i := 0; i < 100 && rec.alive(); i++ {
			time.Sleep(50 * time.Millisecond)
		}
		if rec.alive() {
			return fmt.Errorf("%s (pid %d) still running after SIGKILL", name, rec.pid)
		}
	} else if err := rec.stop(15 * time.Second); err != nil {
		return err
	}
	stopped := time.Since(began)
	time.Sleep(*down)
	c, err := launch(l, name, l.binary(name), componentArgs(l, p, name), nil, os.O_APPEND)
	if err != nil {
		return err
	}
	if err := waitHealthy(l, c, 90*time.Second, healthCheck(l, p, name)); err != nil {
		return err
	}
	fmt.Printf("e2e/cluster: %s restarted: stopped in %.1fs, healthy again (pid %d) %.1fs after the stop began\n",
		name, stopped.Seconds(), c.pid, time.Since(began).Seconds())
	return nil
}
