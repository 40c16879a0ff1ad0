package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// component is one process of the control plane while `up` runs.
type component struct {
	name   string
	pid    int
	exited chan error
}

// start launches a component binary in its own session, with its output in its log file and
// its pid and executable recorded, so that `down` can later stop exactly this process.
func start(l layout, name string, args []string) (*component, error) {
	exe := l.binary(name)
	if _, err := os.Stat(exe); err != nil {
		return nil, fmt.Errorf("%s binary missing at %s (e2e/build.sh builds it): %w", name, exe, err)
	}
	return startProgram(l, name, exe, args, nil)
}

// startProgram is start for any executable, with extra environment variables.
func startProgram(l layout, name, exe string, args, env []string) (*component, error) {
	return launch(l, name, exe, args, env, os.O_TRUNC)
}

// launch is startProgram with the log opened with `mode` (os.O_TRUNC, or os.O_APPEND to keep
// what an earlier run of the component wrote).
func launch(l layout, name, exe string, args, env []string, mode int) (*component, error) {
	return launchLogged(l, name, name, exe, args, env, mode)
}

// launchLogged is launch with the pid recorded as `name` and the output in the log of `logName`,
// which also names the component in failures.
func launchLogged(l layout, name, logName, exe string, args, env []string, mode int) (*component, error) {
	cmd := exec.Command(exe, args...)
	cmd.Dir = l.state
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	return launchCommand(l, name, logName, exe, cmd, mode)
}

// launchCommand starts cmd in its own session with its output in the log of `logName`, and
// records its pid as `name` with exe, the executable's path as this machine sees it (which
// differs from cmd.Path for a process started in a chroot).
func launchCommand(l layout, name, logName, exe string, cmd *exec.Cmd, mode int) (*component, error) {
	logFile, err := os.OpenFile(l.log(logName), os.O_CREATE|os.O_WRONLY|mode, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	fmt.Fprintf(logFile, "# %s %s\n", exe, strings.Join(cmd.Args[1:], " "))
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr.Setsid = true
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	record := fmt.Sprintf("%d\n%s\n", cmd.Process.Pid, exe)
	if err := os.WriteFile(l.pid(name), []byte(record), 0o644); err != nil {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("record pid of %s: %w", name, err)
	}
	c := &component{name: logName, pid: cmd.Process.Pid, exited: make(chan error, 1)}
	go func() {
		err := cmd.Wait()
		if err == nil {
			err = errors.New("exited with status 0")
		}
		c.exited <- err
	}()
	return c, nil
}

// waitHealthy polls check until it succeeds, the component exits, or the timeout passes; a
// failure names the component, the reason and the tail of its log.
func waitHealthy(l layout, c *component, timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		select {
		case err := <-c.exited:
			return componentFailure(l, c.name, fmt.Sprintf("exited before it became healthy: %v", err))
		default:
		}
		if last = check(); last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return componentFailure(l, c.name, fmt.Sprintf("not healthy after %s: %v", timeout, last))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func componentFailure(l layout, name, reason string) error {
	return fmt.Errorf("%s %s\n--- last lines of %s ---\n%s--- end of %s ---",
		name, reason, l.log(name), tail(l.log(name), 40), l.log(name))
}

func tail(path string, lines int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read: %v)\n", err)
	}
	all := strings.SplitAfter(string(data), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	out := strings.Join(all, "")
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out
}

// recordedProcess is a pid file's content: the pid and the executable it was started from.
type recordedProcess struct {
	name string
	pid  int
	exe  string
}

func readRecord(l layout, name string) (recordedProcess, bool) {
	data, err := os.ReadFile(l.pid(name))
	if err != nil {
		return recordedProcess{}, false
	}
	fields := strings.SplitN(strings.TrimSpace(string(data)), "\n", 2)
	if len(fields) != 2 {
		return recordedProcess{}, false
	}
	pid, err := strconv.Atoi(fields[0])
	if err != nil || pid <= 1 {
		return recordedProcess{}, false
	}
	return recordedProcess{name: name, pid: pid, exe: fields[1]}, true
}

// alive tells whether the recorded pid still runs the recorded executable, so that a pid the
// kernel has reused for another program is never signalled.
func (p recordedProcess) alive() bool {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", p.pid))
	if err != nil {
		return false
	}
	if exe != p.exe && exe != p.exe+" (deleted)" {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err != nil {
		return false
	}
	// A zombie has exited; only its parent's wait is missing.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
		return false
	}
	return true
}

// stop ends the recorded process: SIGTERM, then SIGKILL if it is still there after grace.
func (p recordedProcess) stop(grace time.Duration) error {
	if !p.alive() {
		return nil
	}
	if err := syscall.Kill(p.pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %s (pid %d): %w", p.name, p.pid, err)
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if !p.alive() {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := syscall.Kill(p.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s (pid %d): %w", p.name, p.pid, err)
	}
	for i := 0; i < 50 && p.alive(); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if p.alive() {
		return fmt.Errorf("%s (pid %d) still running after SIGKILL", p.name, p.pid)
	}
	return nil
}
