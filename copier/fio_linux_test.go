package copier_test

import "os/exec"

// fioCommand is fio with its jobs as threads of its own process. fio
// forks a process for each job otherwise, in a session of its own:
// killing fio left the job reading, up to its --runtime, beside the
// tests that came after it (seen: a foreground's reads of one subtest's
// file during the next subtest's copy, which yielded to them).
func fioCommand(args ...string) *exec.Cmd {
	return exec.Command("fio", append([]string{"--thread"}, args...)...)
}

// killFio kills fio and, its jobs being threads, every job with it.
func killFio(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}
